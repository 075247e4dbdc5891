/// A coding key that is not a field's: an array's index (named as Foundation's errors name it,
/// `Index 3`, only when asked), or `super`. The JSON coders' containers use it for their paths.
/// One enum (17 bytes) so that it fits an existential's inline buffer: a key held as
/// `any CodingKey` costs no allocation.
enum JSONPositionKey: CodingKey {
    case index(Int)
    case named(String)

    var intValue: Int? {
        if case .index(let index) = self { return index }
        return nil
    }

    var stringValue: String {
        switch self {
        case .index(let index): "Index \(index)"
        case .named(let name): name
        }
    }

    init(stringValue: String) { self = .named(stringValue) }
    init(intValue: Int) { self = .index(intValue) }
}
