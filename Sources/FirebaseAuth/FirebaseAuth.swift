// `import FirebaseAuth`, as an app's code writes it: the auth core's declarations that FirebaseAuth
// 12.19 has, under the SDK's module name, one line each with the SDK's file
// (firebase/firebase-ios-sdk, FirebaseAuth/Sources/Swift/…, at eed63a35). The auth core's own
// names (presenters, timelines, app files) are not re-exported; its members that the SDK lacks are
// `package`, for authsim's own modules only. FirebaseCore is not re-exported either, as the SDK's FirebaseAuth does not
// re-export it: an app imports both, as the guides do. LayoutTests checks that every line here
// names a declaration the SDK has (docs/app-code-on-linux.md).

// The SDK's module brings Foundation (its Objective-C headers import it): an app's file with only
// `import FirebaseAuth` uses NSError, URL and Data.
@_exported import Foundation

// Auth/Auth.swift, Auth/AuthSettings.swift, Auth/AuthDataResult.swift
@_exported import class FirebaseAuthCore.Auth
@_exported import class FirebaseAuthCore.AuthSettings
@_exported import class FirebaseAuthCore.AuthDataResult
// Auth/AuthTokenResult.swift
@_exported import class FirebaseAuthCore.AuthTokenResult
// Public/FirebaseAuth/FIRAuth.h (NS_SWIFT_NAME typedefs of id<NSObject>)
@_exported import protocol FirebaseAuthCore.AuthStateDidChangeListenerHandle
// Public/FirebaseAuth/FIRAuth.h (FIRAuthStateDidChangeNotification)
@_exported import let FirebaseAuthCore.AuthStateDidChange
// Public/FirebaseAuth/FIR…AuthProvider.h and FIRMultiFactor.h: provider IDs and sign-in methods
@_exported import let FirebaseAuthCore.EmailAuthProviderID
@_exported import let FirebaseAuthCore.EmailLinkAuthSignInMethod
@_exported import let FirebaseAuthCore.EmailPasswordAuthSignInMethod
@_exported import let FirebaseAuthCore.PhoneAuthProviderID
@_exported import let FirebaseAuthCore.PhoneAuthSignInMethod
@_exported import let FirebaseAuthCore.PhoneMultiFactorID
@_exported import let FirebaseAuthCore.TOTPMultiFactorID
@_exported import let FirebaseAuthCore.GoogleAuthProviderID
@_exported import let FirebaseAuthCore.GoogleAuthSignInMethod
@_exported import let FirebaseAuthCore.FacebookAuthProviderID
@_exported import let FirebaseAuthCore.FacebookAuthSignInMethod
@_exported import let FirebaseAuthCore.GitHubAuthProviderID
@_exported import let FirebaseAuthCore.GitHubAuthSignInMethod
@_exported import let FirebaseAuthCore.TwitterAuthProviderID
@_exported import let FirebaseAuthCore.TwitterAuthSignInMethod
@_exported import let FirebaseAuthCore.GameCenterAuthProviderID
@_exported import let FirebaseAuthCore.GameCenterAuthSignInMethod
@_exported import protocol FirebaseAuthCore.IDTokenDidChangeListenerHandle
// SystemService/AuthAPNSTokenType.swift
@_exported import enum FirebaseAuthCore.AuthAPNSTokenType
// Utilities/AuthErrors.swift, Public/FirebaseAuth/FIRAuthErrors.h
@_exported import enum FirebaseAuthCore.AuthErrorCode
@_exported import class FirebaseAuthCore.AuthErrors
@_exported import var FirebaseAuthCore.AuthErrorDomain
@_exported import var FirebaseAuthCore.AuthErrorUserInfoNameKey
@_exported import var FirebaseAuthCore.AuthErrorUserInfoEmailKey
@_exported import var FirebaseAuthCore.AuthErrorUserInfoUpdatedCredentialKey
@_exported import var FirebaseAuthCore.AuthErrorUserInfoMultiFactorResolverKey
// Utilities/AuthUIDelegate.swift
@_exported import protocol FirebaseAuthCore.AuthUIDelegate
// AuthProvider/AuthCredential.swift, PhoneAuthCredential.swift, OAuthCredential.swift,
// OAuthProvider.swift, AuthProviderID.swift, PhoneAuthProvider.swift, FederatedAuthProvider.swift
@_exported import class FirebaseAuthCore.AuthCredential
@_exported import class FirebaseAuthCore.PhoneAuthCredential
@_exported import class FirebaseAuthCore.OAuthCredential
@_exported import class FirebaseAuthCore.OAuthProvider
@_exported import protocol FirebaseAuthCore.FederatedAuthProvider
@_exported import struct FirebaseAuthCore.AuthProviderID
@_exported import class FirebaseAuthCore.PhoneAuthProvider
// AuthProvider/EmailAuthProvider.swift
@_exported import class FirebaseAuthCore.EmailAuthProvider
// ActionCode/ActionCodeSettings.swift, ActionCodeInfo.swift, ActionCodeOperation.swift
@_exported import class FirebaseAuthCore.ActionCodeSettings
@_exported import class FirebaseAuthCore.ActionCodeInfo
@_exported import enum FirebaseAuthCore.ActionCodeOperation
// ActionCode/ActionCodeURL.swift
@_exported import class FirebaseAuthCore.ActionCodeURL
// MultiFactor/…: MultiFactor.swift, MultiFactorInfo.swift, MultiFactorAssertion.swift,
// MultiFactorSession.swift, MultiFactorResolver.swift, Phone/PhoneMultiFactorInfo.swift,
// Phone/PhoneMultiFactorAssertion.swift, Phone/PhoneMultiFactorGenerator.swift
@_exported import class FirebaseAuthCore.MultiFactor
@_exported import class FirebaseAuthCore.MultiFactorInfo
@_exported import class FirebaseAuthCore.MultiFactorAssertion
@_exported import class FirebaseAuthCore.MultiFactorSession
@_exported import class FirebaseAuthCore.MultiFactorResolver
@_exported import class FirebaseAuthCore.PhoneMultiFactorInfo
@_exported import class FirebaseAuthCore.PhoneMultiFactorAssertion
@_exported import class FirebaseAuthCore.PhoneMultiFactorGenerator
// User/User.swift, UserInfo.swift, UserMetadata.swift, AdditionalUserInfo.swift
@_exported import class FirebaseAuthCore.User
@_exported import protocol FirebaseAuthCore.UserInfo
@_exported import class FirebaseAuthCore.UserMetadata
@_exported import class FirebaseAuthCore.AdditionalUserInfo
// User/UserProfileChangeRequest.swift
@_exported import class FirebaseAuthCore.UserProfileChangeRequest
// What FirebaseAuth 12.19 has and authsim does not simulate, declared unavailable with a message
// (Unsimulated.swift): AuthProvider/GameCenterAuthProvider.swift
// AuthProvider/GoogleAuthProvider.swift, FacebookAuthProvider.swift, GitHubAuthProvider.swift,
// TwitterAuthProvider.swift (IdentityProviders.swift)
@_exported import class FirebaseAuthCore.GoogleAuthProvider
@_exported import class FirebaseAuthCore.FacebookAuthProvider
@_exported import class FirebaseAuthCore.GitHubAuthProvider
@_exported import class FirebaseAuthCore.TwitterAuthProvider
@_exported import enum FirebaseAuthCore.GameCenterAuthProvider
// MultiFactor/TOTP/TOTPMultiFactorGenerator.swift, TOTPSecret.swift, TOTPMultFactorAssertion.swift (TOTP.swift)
@_exported import class FirebaseAuthCore.TOTPMultiFactorGenerator
@_exported import class FirebaseAuthCore.TOTPSecret
@_exported import class FirebaseAuthCore.TOTPMultiFactorAssertion
