/// A coding key that is not a field's: an array's index (named as Foundation's errors name it,
/// `Index 3`, only when asked), or `super`. The JSON coders' containers use it for their paths.
struct JSONPositionKey: CodingKey {
    private let name: String?
    let intValue: Int?
    var stringValue: String { name ?? "Index \(intValue ?? 0)" }

    init(stringValue: String) {
        name = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        name = nil
        self.intValue = intValue
    }
}
