import IdentityToolkitAPI
/// Phone-number checks as the service makes them: E.164 (`+` and 8 to 15 digits).
package enum PhoneNumbers {
    /// The number in E.164 form, or the error the service answers.
    package static func validate(_ number: String?) throws(IdentityToolkitError) -> String {
        guard let number, !number.isEmpty else { throw IdentityToolkitError(.missingPhoneNumber) }
        let compact = number.filter { $0 != " " && $0 != "-" && $0 != "(" && $0 != ")" }
        guard compact.hasPrefix("+"), compact.dropFirst().allSatisfy(\.isASCII), compact.dropFirst().allSatisfy(\.isNumber),
              compact.count > 1
        else { throw IdentityToolkitError(.invalidPhoneNumber, "Invalid format.") }
        let digits = compact.count - 1
        if digits < 8 { throw IdentityToolkitError(.invalidPhoneNumber, "TOO_SHORT") }
        if digits > 15 { throw IdentityToolkitError(.invalidPhoneNumber, "TOO_LONG") }
        return compact
    }

    /// The number with all but its last four digits as `*` (`+*******1234`), as a second factor's
    /// hint shows it before the second factor is passed.
    package static func obfuscated(_ number: String) -> String {
        var digits = 0
        return String(number.reversed().map { character -> Character in
            guard character.isNumber else { return character }
            digits += 1
            return digits > 4 ? "*" : character
        }.reversed())
    }
}
