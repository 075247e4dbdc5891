import Foundation

// The string constants FirebaseAuth 12.19's Objective-C headers give Swift (NS_SWIFT_NAME), with
// the values `Sources/ObjC/FIRAuthProvider.m` and `FIRMultiFactorConstants.m` give them. A
// provider's ID is what `UserInfo.providerID` holds; a sign-in method is what
// `fetchSignInMethods(forEmail:)` answers.

// Public/FirebaseAuth/FIREmailAuthProvider.h
/// `FIREmailAuthProviderID`: the email and password provider.
public let EmailAuthProviderID = "password"
/// `FIREmailLinkAuthSignInMethod`: sign-in by an email link.
public let EmailLinkAuthSignInMethod = "emailLink"
/// `FIREmailPasswordAuthSignInMethod`: sign-in by email and password.
public let EmailPasswordAuthSignInMethod = "password"

// Public/FirebaseAuth/FIRPhoneAuthProvider.h
/// `FIRPhoneAuthProviderID`: the phone provider.
public let PhoneAuthProviderID = "phone"
/// `FIRPhoneAuthSignInMethod`.
public let PhoneAuthSignInMethod = "phone"

// Public/FirebaseAuth/FIRMultiFactor.h
/// `FIRPhoneMultiFactorID`: a phone second factor's `factorID`.
public let PhoneMultiFactorID = "phone"
/// `FIRTOTPMultiFactorID`: a TOTP second factor's `factorID`.
public let TOTPMultiFactorID = "totp"

// Public/FirebaseAuth/FIRGoogleAuthProvider.h, FIRFacebookAuthProvider.h, FIRGitHubAuthProvider.h,
// FIRTwitterAuthProvider.h, FIRGameCenterAuthProvider.h
/// `FIRGoogleAuthProviderID`.
public let GoogleAuthProviderID = "google.com"
/// `FIRGoogleAuthSignInMethod`.
public let GoogleAuthSignInMethod = "google.com"
/// `FIRFacebookAuthProviderID`.
public let FacebookAuthProviderID = "facebook.com"
/// `FIRFacebookAuthSignInMethod`.
public let FacebookAuthSignInMethod = "facebook.com"
/// `FIRGitHubAuthProviderID`.
public let GitHubAuthProviderID = "github.com"
/// `FIRGitHubAuthSignInMethod`.
public let GitHubAuthSignInMethod = "github.com"
/// `FIRTwitterAuthProviderID`.
public let TwitterAuthProviderID = "twitter.com"
/// `FIRTwitterAuthSignInMethod`.
public let TwitterAuthSignInMethod = "twitter.com"
/// `FIRGameCenterAuthProviderID`.
public let GameCenterAuthProviderID = "gc.apple.com"
/// `FIRGameCenterAuthSignInMethod`.
public let GameCenterAuthSignInMethod = "gc.apple.com"

// Public/FirebaseAuth/FIRAuth.h
/// `FIRAuthStateDidChangeNotification`: posted with the `Auth` as its object when the current
/// user or its ID token changes (the same moment as ``Auth/authStateDidChangeNotification``).
public let AuthStateDidChange = NSNotification.Name("FIRAuthStateDidChangeNotification")
