/// The name of `value`'s enum case (`pushRejected` for `.pushRejected(token: …)`): the label
/// Swift's reflection gives a case with associated values, or the case itself when it has none.
package func enumCaseName(_ value: Any) -> String {
    Mirror(reflecting: value).children.first?.label ?? String(describing: value)
}
