import Foundation
import Utilities

/// Why an app file could not be used.
package struct AppFileError: CodedError {
    package enum Code: String, Sendable {
        /// The file is missing or unreadable.
        case unreadable
        /// Not an XML or binary property list.
        case notAPropertyList
        /// A required key is absent.
        case missingKey
        /// A key holds the wrong kind of value, or a value the SDK cannot use.
        case invalidValue
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A property list read from disk, in either of the formats Xcode writes (XML, or binary
/// `bplist00` as found inside a built `.app`).
///
/// `@unchecked Sendable` because `dictionary` holds Foundation objects the compiler cannot check:
/// they are the immutable ones `PropertyListSerialization` makes (no mutable-containers option),
/// the property is a `let`, and nothing here hands out a way to change them, so sharing across
/// threads only ever reads them.
package struct PropertyListFile: @unchecked Sendable {
    package enum Format: String, Sendable { case xml, binary, openStep }
    package let url: URL
    package let format: Format
    /// The top-level dictionary. Values are Foundation property-list objects.
    package let dictionary: [String: Any]

    package init(contentsOf url: URL) throws(AppFileError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw AppFileError(.unreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: data, url: url)
    }

    /// A property list already in memory; `url` names it in errors.
    package init(data: Data, url: URL) throws(AppFileError) {
        try Self.refuseSets(in: data, url: url)
        var format = PropertyListSerialization.PropertyListFormat.xml
        let object: Any
        do { object = try PropertyListSerialization.propertyList(from: data, options: [], format: &format) } catch {
            throw AppFileError(.notAPropertyList, "\(url.path) is not an XML or binary property list (\(data.count) bytes)")
        }
        guard let dictionary = object as? [String: Any] else {
            throw AppFileError(.notAPropertyList, "\(url.path): the top-level object is not a dictionary")
        }
        self.url = url
        self.dictionary = dictionary
        switch format {
        case .binary: self.format = .binary
        case .openStep: self.format = .openStep
        default: self.format = .xml
        }
    }

    /// A binary plist may hold sets (marker 0xCn), which Xcode never writes and which crash
    /// Foundation's reader on Linux (found by fuzzing: Fuzz/regressions/plist/bplist-with-set).
    /// Walks the offset table (bounded by the file) and refuses any set before Foundation sees it.
    static func refuseSets(in data: Data, url: URL) throws(AppFileError) {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else { return }
        let trailer = bytes.count - 32
        func integer(_ start: Int, _ size: Int) -> Int? {
            guard size >= 1, size <= 8, start >= 0, start + size <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + size] {
                guard value <= (Int.max >> 8) else { return nil }
                value = value << 8 | Int(byte)
            }
            return value
        }
        let offsetSize = Int(bytes[trailer + 6])
        guard let objects = integer(trailer + 8, 8), let table = integer(trailer + 24, 8),
              offsetSize >= 1, offsetSize <= 8, objects <= bytes.count, table <= trailer,
              table + objects * offsetSize <= trailer
        else { throw AppFileError(.notAPropertyList, "\(url.path): a damaged binary plist (its trailer or offset table is out of bounds)") }
        for index in 0..<objects {
            guard let offset = integer(table + index * offsetSize, offsetSize), offset < trailer else {
                throw AppFileError(.notAPropertyList, "\(url.path): a damaged binary plist (object \(index) lies outside the file)")
            }
            if bytes[offset] >> 4 == 0xC {
                throw AppFileError(.notAPropertyList, "\(url.path): the binary plist holds a set, which app plists never contain")
            }
        }
    }

    /// A string value; `required` makes its absence an error naming the key and the file.
    package func string(_ key: String, required: Bool) throws(AppFileError) -> String? {
        guard let value = dictionary[key] else {
            if required { throw AppFileError(.missingKey, "\(url.lastPathComponent) has no \(key)") }
            return nil
        }
        guard let text = value as? String else {
            throw AppFileError(.invalidValue, "\(url.lastPathComponent): \(key) is \(type(of: value)), not a string")
        }
        return text
    }
}

