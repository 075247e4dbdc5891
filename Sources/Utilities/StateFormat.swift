import Foundation

/// The format of a kind of file authsim writes (the backend's journal, push-receiver's logs and
/// registry, an export's own config), and which of its versions this build reads.
///
/// Every such file says which format version it holds and which authsim wrote it (a
/// ``FormatStamp``). A reader takes versions from ``oldestRead`` to ``current``; a file of a newer
/// version is refused with a message that names both authsims, never read half-understood. A file
/// written before stamps existed has none: it is version 1.
///
/// The version goes up when a change would make an older authsim misread the file: a record it
/// does not know, a field that changes meaning. A new optional field that older readers skip does
/// not change it.
package struct StateFormat: Sendable, Hashable {
    /// What the file is, as its stamp names it ("backend journal").
    package let kind: String
    /// The version this build writes.
    package let current: Int
    /// The oldest version this build still reads (and migrates on write).
    package let oldestRead: Int

    package init(kind: String, current: Int, oldestRead: Int = 1) {
        precondition(1...current ~= oldestRead, "a format reads its current version")
        self.kind = kind
        self.current = current
        self.oldestRead = oldestRead
    }

    /// The stamp a file written now carries.
    package var stamp: FormatStamp { FormatStamp(format: kind, version: current, writtenBy: AuthsimVersion.current) }

    /// The version of `path`, whose stamp is `stamp` (`nil`: written before stamps, version 1),
    /// or why this build cannot read it.
    package func version(of stamp: FormatStamp?, in path: String) throws(StateFormatError) -> Int {
        guard let stamp else {
            guard oldestRead == 1 else {
                throw StateFormatError(.tooOld, """
                    \(path) has no format stamp: it was written before authsim stamped its files (\(kind) format 1), \
                    and this authsim (\(AuthsimVersion.current)) reads formats \(oldestRead)–\(current) only
                    """)
            }
            return 1
        }
        guard stamp.format == kind else {
            throw StateFormatError(.otherKind, "\(path) holds authsim's \(stamp.format), not its \(kind)")
        }
        if stamp.version > current {
            throw StateFormatError(.newer, """
                \(path) was written by authsim \(stamp.writtenBy) in \(kind) format \(stamp.version); this authsim \
                (\(AuthsimVersion.current)) reads formats \(oldestRead)–\(current). Run authsim \(stamp.writtenBy) or newer on it, \
                or start this one from an export
                """)
        }
        if stamp.version < oldestRead {
            throw StateFormatError(.tooOld, """
                \(path) was written by authsim \(stamp.writtenBy) in \(kind) format \(stamp.version); this authsim \
                (\(AuthsimVersion.current)) reads formats \(oldestRead)–\(current) only
                """)
        }
        return stamp.version
    }
}

/// A file's format, version and writer, as it says them: the first line of a file of JSON lines,
/// or a member of a JSON document (`{"authsim-format": "backend journal", "version": 2,
/// "written-by": "0.1.0"}`).
package struct FormatStamp: Codable, Sendable, Hashable {
    package var format: String
    package var version: Int
    package var writtenBy: String

    package init(format: String, version: Int, writtenBy: String) {
        self.format = format
        self.version = version
        self.writtenBy = writtenBy
    }

    enum CodingKeys: String, CodingKey {
        case format = "authsim-format", version, writtenBy = "written-by"
    }

    /// The stamp as a line of a JSON-lines file, newline included. Its first key is one no record
    /// of any of authsim's files has, so a line is told from a record by its start.
    package var line: String {
        #"{"authsim-format":\#(CompactJSON.string(format)),"version":\#(version),"written-by":\#(CompactJSON.string(writtenBy))}"# + "\n"
    }

    /// The stamp a line is, or `nil` when the line is not one (a record, or written before stamps).
    package static func parse(line: some DataProtocol) -> FormatStamp? {
        guard line.starts(with: linePrefix) else { return nil }
        return try? JSONDecoder().decode(FormatStamp.self, from: Data(line))
    }

    /// How a stamp line starts.
    package static let linePrefix = Array(#"{"authsim-format":"#.utf8)
}

/// Why a file's format cannot be read by this build.
package struct StateFormatError: CodedError {
    package enum Code: String, Sendable, Hashable {
        /// A newer authsim wrote it, in a version this one does not know.
        case newer
        /// An authsim so old that this one no longer reads its version.
        case tooOld
        /// The file is another of authsim's files.
        case otherKind
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
