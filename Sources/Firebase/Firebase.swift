// `import Firebase`, as many apps write it: the SDK's umbrella module (firebase/firebase-ios-sdk,
// CoreOnly/Sources/Firebase.h at eed63a35), which brings FirebaseCore and each Firebase module the app
// links: here FirebaseAuth, the one authsim simulates.
@_exported import FirebaseCore
@_exported import FirebaseAuth
