import FirebaseCore

    /// The scheme the reCAPTCHA page returns to, as the SDK derives it: the reversed client ID when
    /// `Info.plist` registers it, else the encoded app ID.
extension AppBundle {
    package var callbackScheme: String { CallbackScheme.derive(options: options, registered: info.urlSchemes) }
}

/// The SDK's choice of callback scheme.
package enum CallbackScheme {
    package static func derive(options: FirebaseOptions, registered schemes: [String]) -> String {
        if let reversed = options.reversedClientIDScheme, isRegistered(reversed, in: schemes) { return reversed }
        return options.encodedAppIDScheme
    }

    /// `AuthWebUtils.isCallbackSchemeRegistered`: a case-insensitive match.
    package static func isRegistered(_ scheme: String, in schemes: [String]) -> Bool {
        schemes.contains { $0.lowercased() == scheme.lowercased() }
    }
}

