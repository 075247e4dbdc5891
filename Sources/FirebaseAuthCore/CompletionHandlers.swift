import Foundation

// The completion-handler form of every call the phone-auth and Apple sign-in guides make, beside
// its async form, as FirebaseAuth 12.19 offers both.
//
// The main queue, on Linux. The SDK calls these completions on the main queue
// (`DispatchQueue.main.async` in `Auth.wrapMainAsync`, `await MainActor.run` elsewhere), and so
// does this, through the main actor, whose executor is the main dispatch queue:
// `dispatchPrecondition(condition: .onQueue(.main))` holds in them. Their types are 12.19's: plain
// closures, except `verifyPhoneNumber`'s two `@MainActor` ones (PhoneAuthProvider.swift 60, 79), so
// Swift 6 code gets the diagnostics here that it gets in Xcode. Linux has no UIApplication to
// drain that queue: a program whose entry point is `async` (`@main` with `static func main()
// async`, an `AsyncParsableCommand`, `swift test`) has it drained by the Swift runtime (which calls
// `dispatchMain()`, after which a worker thread, not thread 1, serves the queue, so
// `Thread.isMainThread` is false there); a synchronous `main` must call `dispatchMain()` or run
// `RunLoop.main`, as an iOS app whose main thread is blocked would never see them either.
//
// Each completion is called exactly once. Where the SDK calls a completion synchronously
// (`MultiFactor.getSessionWithCompletion`), so does this.

/// Runs `work`, then hands its result or error to `completion` on the main queue, once. Neither the
/// closure nor the value need be `Sendable` (`AuthDataResult` is not, as in 12.19): each goes from
/// the call to the main queue and no further, as the SDK's `DispatchQueue.main.async` hands it over.
func complete<Value>(_ completion: ((Value?, (any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Value) {
    let completion = completion.map(HandedOver.init)
    Task {
        let result: Result<Value, any Error>
        do { result = .success(try await work()) } catch { result = .failure(AuthError.toApp(error)) }
        guard let completion else { return }
        let handedOver = HandedOver(result)
        await MainActor.run {
            switch handedOver.value {
            case .success(let value): completion.value(value, nil)
            case .failure(let error): completion.value(nil, error)
            }
        }
    }
}

/// ``complete(_:_:)`` for a call on `subject` (a `User`, not `Sendable`, as in 12.19), which the
/// task uses alone from then on, as the SDK's work queue does.
func complete<Subject, Value>(_ completion: ((Value?, (any Error)?) -> Void)?, with subject: Subject,
                              _ work: @escaping @Sendable (Subject) async throws -> Value) {
    let subject = HandedOver(subject)
    complete(completion) { try await work(subject.value) }
}

/// ``complete(_:with:_:)`` for calls that give back no value.
func complete<Subject>(_ completion: (((any Error)?) -> Void)?, with subject: Subject, _ work: @escaping @Sendable (Subject) async throws -> Void) {
    let subject = HandedOver(subject)
    complete(completion) { try await work(subject.value) }
}

/// ``complete(_:_:)`` for calls that give back no value.
func complete(_ completion: (((any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Void) {
    let completion = completion.map(HandedOver.init)
    Task {
        var failure: (any Error)?
        do { try await work() } catch { failure = AuthError.toApp(error) }
        guard let completion else { return }
        await MainActor.run { [failure] in completion.value(failure) }
    }
}

/// ``complete(_:_:)`` for the completions 12.19 declares `@MainActor` (``complete(_:_:)`` calls
/// them on the main actor).
func completeOnMainActor<Value: Sendable>(_ completion: (@MainActor (Value?, (any Error)?) -> Void)?,
                                          _ work: @escaping @Sendable () async throws -> Value) {
    complete(completion.map { completion in { value, error in MainActor.assumeIsolated { completion(value, error) } } }, work)
}

/// A value (or closure) handed from the call that made it to the main queue, which alone uses it
/// from then on.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Auth {
    /// `signIn(with:completion:)`: ``signIn(with:)`` with a completion on the main queue.
    public func signIn(with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws -> AuthDataResult in try await auth.signIn(with: credential) }
    }

    /// `signIn(with:uiDelegate:completion:)`: through the provider's web flow (no default for the
    /// completion, as in 12.19).
    public func signIn(with provider: any FederatedAuthProvider, uiDelegate: (any AuthUIDelegate)?,
                       completion: ((AuthDataResult?, (any Error)?) -> Void)?) {
        complete(completion, with: (self, provider, uiDelegate)) { (call: (Auth, any FederatedAuthProvider, (any AuthUIDelegate)?)) async throws -> AuthDataResult in
            try await call.0.signIn(with: call.1, uiDelegate: call.2)
        }
    }

    /// `getToken(forcingRefresh:completion:)` (the SDK's `AuthInterop`, for other Firebase
    /// libraries): the current user's ID token, refreshed when due or forced; `(nil, nil)` with no
    /// user. The SDK also starts refreshing tokens ahead of expiry from this call on; here a token
    /// is refreshed when asked for (docs/app-code-on-linux.md).
    public func getToken(forcingRefresh forceRefresh: Bool, completion callback: @escaping (String?, (any Error)?) -> Void) {
        guard let user = currentUser else {
            let callback = HandedOver(callback)
            Task { @MainActor in callback.value(nil, nil) }
            return
        }
        complete(callback, with: user) { (user: User) async throws -> String in try await user.getIDToken(forcingRefresh: forceRefresh) }
    }

    /// `getUserID()` (`AuthInterop`): the current user's UID, nil when signed out.
    public func getUserID() -> String? { currentUser?.uid }

    /// `revokeToken(withAuthorizationCode:completion:)`.
    public func revokeToken(withAuthorizationCode authorizationCode: String, completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (auth: Auth) async throws in try await auth.revokeToken(withAuthorizationCode: authorizationCode) }
    }
}

extension PhoneAuthProvider {
    /// `verifyPhoneNumber(_:uiDelegate:completion:)`: the verification ID, or the error.
    public func verifyPhoneNumber(_ phoneNumber: String, uiDelegate: (any AuthUIDelegate)? = nil,
                                  completion: (@MainActor (String?, (any Error)?) -> Void)?) {
        verifyPhoneNumber(phoneNumber, uiDelegate: uiDelegate, multiFactorSession: nil, completion: completion)
    }

    /// `verifyPhoneNumber(_:uiDelegate:multiFactorSession:completion:)`.
    public func verifyPhoneNumber(_ phoneNumber: String, uiDelegate: (any AuthUIDelegate)? = nil,
                                  multiFactorSession: MultiFactorSession? = nil,
                                  completion: (@MainActor (String?, (any Error)?) -> Void)?) {
        let handedOver = HandedOver((uiDelegate, multiFactorSession))
        completeOnMainActor(completion) { () async throws -> String in
            try await self.verifyPhoneNumber(phoneNumber, uiDelegate: handedOver.value.0, multiFactorSession: handedOver.value.1)
        }
    }

    /// `verifyPhoneNumber(with:uiDelegate:multiFactorSession:completion:)`: a second factor's code,
    /// to the hint the user chose.
    public func verifyPhoneNumber(with multiFactorInfo: PhoneMultiFactorInfo, uiDelegate: (any AuthUIDelegate)? = nil,
                                  multiFactorSession: MultiFactorSession?,
                                  completion: ((String?, (any Error)?) -> Void)?) {
        let handedOver = HandedOver((uiDelegate, multiFactorSession))
        complete(completion) { () async throws -> String in
            try await self.verifyPhoneNumber(with: multiFactorInfo, uiDelegate: handedOver.value.0, multiFactorSession: handedOver.value.1)
        }
    }
}

extension User {
    /// `getIDToken(completion:)`.
    public func getIDToken(completion: ((String?, (any Error)?) -> Void)?) {
        getIDTokenForcingRefresh(false, completion: completion)
    }

    /// `getIDTokenForcingRefresh(_:completion:)`.
    public func getIDTokenForcingRefresh(_ forceRefresh: Bool, completion: ((String?, (any Error)?) -> Void)?) {
        complete(completion, with: self) { (user: User) async throws -> String in try await user.getIDToken(forcingRefresh: forceRefresh) }
    }

    /// `idTokenForcingRefresh(_:)`: 12.19 keeps Firebase 10's name for ``getIDToken(forcingRefresh:)``.
    public func idTokenForcingRefresh(_ forceRefresh: Bool) async throws -> String {
        try await getIDToken(forcingRefresh: forceRefresh)
    }

    /// `anonymous()`: ``isAnonymous`` (the SDK keeps it for Objective-C).
    public func anonymous() -> Bool { isAnonymous }

    /// `emailVerified()`: ``isEmailVerified``.
    public func emailVerified() -> Bool { isEmailVerified }

    /// `__sendEmailVerification(withCompletion:)`: ``sendEmailVerification(with:completion:)``
    /// without settings (the Objective-C selector's Swift name).
    public func __sendEmailVerification(withCompletion completion: (((any Error)?) -> Void)?) {
        sendEmailVerification(with: nil, completion: completion)
    }

    /// `__sendEmailVerificationBeforeUpdating(email:completion:)`.
    public func __sendEmailVerificationBeforeUpdating(email: String, completion: (((any Error)?) -> Void)?) {
        sendEmailVerification(beforeUpdatingEmail: email, actionCodeSettings: nil, completion: completion)
    }

    /// `reauthenticate(with:completion:)`.
    public func reauthenticate(with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws -> AuthDataResult in try await user.reauthenticate(with: credential) }
    }

    /// `link(with:completion:)`.
    public func link(with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws -> AuthDataResult in try await user.link(with: credential) }
    }

    /// `link(with:uiDelegate:completion:)`: through the provider's web flow.
    public func link(with provider: any FederatedAuthProvider, uiDelegate: (any AuthUIDelegate)?,
                     completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: (self, provider, uiDelegate)) { (call: (User, any FederatedAuthProvider, (any AuthUIDelegate)?)) async throws -> AuthDataResult in
            try await call.0.link(with: call.1, uiDelegate: call.2)
        }
    }

    /// `reauthenticate(with:uiDelegate:completion:)`: through the provider's web flow.
    public func reauthenticate(with provider: any FederatedAuthProvider, uiDelegate: (any AuthUIDelegate)?,
                               completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: (self, provider, uiDelegate)) { (call: (User, any FederatedAuthProvider, (any AuthUIDelegate)?)) async throws -> AuthDataResult in
            try await call.0.reauthenticate(with: call.1, uiDelegate: call.2)
        }
    }

    /// `delete(completion:)`.
    public func delete(completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in try await user.delete() }
    }

    /// `reload(completion:)`.
    public func reload(completion: (((any Error)?) -> Void)? = nil) {
        complete(completion, with: self) { (user: User) async throws in try await user.reload() }
    }
}

extension MultiFactor {
    /// `getSessionWithCompletion(_:)`: the SDK calls it at once, on the caller's thread; so does this.
    public func getSessionWithCompletion(_ completion: ((MultiFactorSession?, (any Error)?) -> Void)?) {
        guard let user else {
            completion?(nil, AuthError(.nullUser, "this MultiFactor's user is gone (signed out and released)"))
            return
        }
        completion?(MultiFactorSession(idToken: user.rawIDToken, mfaPendingCredential: nil), nil)
    }

    /// `enroll(with:displayName:completion:)`.
    public func enroll(with assertion: MultiFactorAssertion, displayName: String?, completion: (((any Error)?) -> Void)?) {
        complete(completion, with: (self, assertion)) { (multiFactor: MultiFactor, assertion: MultiFactorAssertion) async throws in
            try await multiFactor.enroll(with: assertion, displayName: displayName)
        }
    }

    /// `unenroll(with:completion:)`.
    public func unenroll(with factorInfo: MultiFactorInfo, completion: (((any Error)?) -> Void)?) {
        unenroll(withFactorUID: factorInfo.uid, completion: completion)
    }

    /// `unenroll(withFactorUID:completion:)`. (The SDK calls this completion off the main queue
    /// when the backend refuses; this always uses the main queue.)
    public func unenroll(withFactorUID factorUID: String, completion: (((any Error)?) -> Void)?) {
        complete(completion, with: self) { (multiFactor: MultiFactor) async throws in try await multiFactor.unenroll(withFactorUID: factorUID) }
    }
}

extension MultiFactorResolver {
    /// `resolveSignIn(with:completion:)`.
    public func resolveSignIn(with assertion: MultiFactorAssertion,
                              completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion, with: (self, assertion)) { (resolver: MultiFactorResolver, assertion: MultiFactorAssertion) async throws -> AuthDataResult in
            try await resolver.resolveSignIn(with: assertion)
        }
    }
}
