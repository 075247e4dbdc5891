/// Which regions may receive SMS codes, as set in the Firebase console (Authentication → Settings →
/// SMS region policy). Regions are two-letter codes.
package enum SMSRegionPolicy: Sendable, Hashable {
    /// `allowlistOnly.allowedRegions`: only these.
    case allowlistOnly([String])
    /// `allowByDefault.disallowedRegions`: all but these.
    case allowByDefault(disallowed: [String])

    package func allows(_ region: String?) -> Bool {
        switch self {
        case .allowlistOnly(let allowed): return region.map { allowed.contains($0) } ?? false
        case .allowByDefault(let disallowed): return region.map { !disallowed.contains($0) } ?? true
        }
    }
}

extension PhoneNumbers {
    /// The region of an E.164 number, from its calling code (the longest matching prefix). `+1` is
    /// `US` (the North American plan's other members are not told apart by area code here); `+7` is
    /// `RU`. `nil` for a calling code not in the table.
    package static func region(of number: String) -> String? {
        let digits = number.dropFirst()
        for length in [3, 2, 1] where digits.count > length {
            if let region = callingCodes[String(digits.prefix(length))] { return region }
        }
        return nil
    }

    static let callingCodes: [String: String] = [
        "1": "US", "7": "RU", "20": "EG", "27": "ZA", "30": "GR", "31": "NL", "32": "BE", "33": "FR", "34": "ES",
        "36": "HU", "39": "IT", "40": "RO", "41": "CH", "43": "AT", "44": "GB", "45": "DK", "46": "SE", "47": "NO",
        "48": "PL", "49": "DE", "51": "PE", "52": "MX", "53": "CU", "54": "AR", "55": "BR", "56": "CL", "57": "CO",
        "58": "VE", "60": "MY", "61": "AU", "62": "ID", "63": "PH", "64": "NZ", "65": "SG", "66": "TH", "81": "JP",
        "82": "KR", "84": "VN", "86": "CN", "90": "TR", "91": "IN", "92": "PK", "93": "AF", "94": "LK", "95": "MM",
        "98": "IR", "212": "MA", "213": "DZ", "216": "TN", "234": "NG", "254": "KE", "255": "TZ", "256": "UG",
        "351": "PT", "353": "IE", "354": "IS", "358": "FI", "380": "UA", "420": "CZ", "852": "HK", "880": "BD",
        "886": "TW", "966": "SA", "971": "AE", "972": "IL",
    ]
}
