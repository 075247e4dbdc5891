/// The shape of every error in the toolkit: a code to match on and a message for people.
///
/// Two errors are equal when their codes are (so tests and callers match on the code, and the
/// wording can improve freely); the description is the message.
package protocol CodedError: Error, Sendable, Hashable, CustomStringConvertible {
    associatedtype Code: Hashable & Sendable
    var code: Code { get }
    var message: String { get }
}

extension CodedError {
    package var description: String { message }
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
