import Foundation

/// Writes a property list (a dictionary of strings, numbers, Booleans, dates, data, arrays and
/// dictionaries) as XML or binary, through Foundation's `PropertyListEncoder`.
///
/// Not `PropertyListSerialization.data(fromPropertyList:)`: in a binary linked with
/// `--static-swift-stdlib` (the release bundle) CoreFoundation's writer does not know its own array
/// type and refuses any list holding an array ("property lists cannot contain objects of type 'Not
/// A Type'", NSCocoaErrorDomain 3851), while the same call works in a dynamically linked build.
/// `PropertyListEncoder` is Swift (swift-foundation) and writes the same bytes in both.
/// `Tests/LayoutTests` keeps the CoreFoundation writer out of `Sources/`.
package enum PropertyListWriter {
    /// Why a value cannot go into a property list.
    package struct Unsupported: Error, CustomStringConvertible {
        /// The key path of the value, as `CFBundleURLTypes[0].CFBundleURLSchemes`.
        package let path: String
        package let type: String
        package var description: String { "\(path) is a \(type), which a property list cannot hold" }
    }

    /// `plist` as bytes in `format` (`.xml` or `.binary`; OpenStep is read-only in Foundation).
    package static func data(_ plist: [String: Any], format: PropertyListSerialization.PropertyListFormat = .xml) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        return try encoder.encode(Value.dictionary(try plist.mapValuesWithPath("") { try Value($0, path: $1) }))
    }

    /// One value of a property list.
    enum Value: Encodable {
        case string(String), integer(Int64), unsigned(UInt64), real(Double), boolean(Bool), date(Date), data(Data)
        case array([Value]), dictionary([String: Value])

        init(_ value: Any, path: String) throws {
            switch value {
            case let value as String: self = .string(value)
            case let value as Bool where type(of: value) == Bool.self: self = .boolean(value)
            case let value as NSNumber: self = Self.number(value)
            case let value as Int: self = .integer(Int64(value))
            case let value as Int64: self = .integer(value)
            case let value as Int32: self = .integer(Int64(value))
            case let value as UInt64: self = .unsigned(value)
            case let value as Double: self = .real(value)
            case let value as Date: self = .date(value)
            case let value as Data: self = .data(value)
            case let value as [Any]:
                self = .array(try value.enumerated().map { try Value($0.element, path: "\(path)[\($0.offset)]") })
            case let value as [String: Any]:
                self = .dictionary(try value.mapValuesWithPath(path) { try Value($0, path: $1) })
            default:
                throw Unsupported(path: path.isEmpty ? "the value" : path, type: String(describing: Swift.type(of: value)))
            }
        }

        /// A number read back from a property list (Foundation's reader makes `NSNumber`s): a
        /// Boolean stays one, a whole number an integer.
        private static func number(_ number: NSNumber) -> Value {
            switch String(cString: number.objCType) {
            case "c", "B": return .boolean(number.boolValue)
            case "f", "d": return .real(number.doubleValue)
            case "Q", "L": return .unsigned(number.uint64Value)
            default: return .integer(number.int64Value)
            }
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .array(let values):
                var container = encoder.unkeyedContainer()
                for value in values { try container.encode(value) }
            case .dictionary(let values):
                // Keys sorted: the bytes depend on the contents only.
                var container = encoder.container(keyedBy: Key.self)
                for key in values.keys.sorted() { try container.encode(values[key]!, forKey: Key(key)) }
            default:
                var container = encoder.singleValueContainer()
                switch self {
                case .string(let value): try container.encode(value)
                case .integer(let value): try container.encode(value)
                case .unsigned(let value): try container.encode(value)
                case .real(let value): try container.encode(value)
                case .boolean(let value): try container.encode(value)
                case .date(let value): try container.encode(value)
                case .data(let value): try container.encode(value)
                case .array, .dictionary: break
                }
            }
        }
    }

    struct Key: CodingKey {
        let stringValue: String
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

private extension Dictionary where Key == String {
    func mapValuesWithPath<T>(_ path: String, _ transform: (Value, String) throws -> T) rethrows -> [String: T] {
        var result: [String: T] = [:]
        for (key, value) in self { result[key] = try transform(value, path.isEmpty ? key : "\(path).\(key)") }
        return result
    }
}
