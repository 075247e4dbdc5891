#!/bin/sh
# FirebaseAuth's own integration tests (FirebaseAuth/Tests/SampleSwift/SwiftApiTests at the contract
# commit), run unchanged on Linux: built against `import FirebaseAuth` here and run by `authsim exec`
# with a test host and the project they expect, seeded as the Auth Emulator is (an export folder);
# and its API test (FirebaseAuth/Tests/Unit/SwiftAPI.swift), compiled with them.
#
#     Scripts/sdk-swift-api-tests.sh GIT_DIR [COMMIT]
#
# GIT_DIR is a clone of firebase/firebase-ios-sdk (its .git folder or a bare mirror); COMMIT defaults
# to the contract's. The tests are Google's code: they are copied into .sdk-tests/ (ignored by git),
# never into the repository. Left out: Credentials.swift (a template of Google and Facebook
# secrets), FacebookTests and GoogleTests (identity providers), UserThreadSafetyTests (it reaches the
# SDK's internals with @testable import). PhoneMultiFactorTests' two tests are SKIP-prefixed in the
# SDK and stay skipped. Exit status: the tests'.
set -eu
git_dir=${1:?usage: Scripts/sdk-swift-api-tests.sh GIT_DIR [COMMIT]}
commit=${2:-eed63a35a90dbd46184ca1a6afeb144ee783b5fd}
cd "$(dirname "$0")/.."
rm -rf .sdk-tests
mkdir -p .sdk-tests/SwiftApiTests .sdk-tests/project/auth_export
for name in TestsBase AnonymousTests EmailPasswordTests AccountInfoTests PhoneAuthTests PhoneMultiFactorTests; do
    git --git-dir "$git_dir" show "$commit:FirebaseAuth/Tests/SampleSwift/SwiftApiTests/$name.swift" > ".sdk-tests/SwiftApiTests/$name.swift"
done

# The SDK's API test (FirebaseAuth/Tests/Unit/SwiftAPI.swift: a function per public header, compiled,
# never run), built with the rest. Three of its parts are for a device and are kept off Linux here,
# each the SDK's own condition narrowed to iOS (docs/app-code-on-linux.md says why): `import UIKit`
# (no UIKit on Linux), the UIKit-shaped `AuthUIDelegate` (its view controllers) and Game Center.
# Everything else compiles unchanged; a shape that moved stops this script.
git --git-dir "$git_dir" show "$commit:FirebaseAuth/Tests/Unit/SwiftAPI.swift" | python3 -c '
import sys
text = sys.stdin.read()
for old, new in [("#if !os(macOS)\n  import UIKit\n#endif", "#if os(iOS)\n  import UIKit\n#endif"),
                 ("#if !os(macOS) && !os(watchOS)\n    func FIRAuthUIDelegate_h", "#if os(iOS)\n    func FIRAuthUIDelegate_h"),
                 ("#if !os(watchOS)\n    func FIRGameCenterAuthProvider_h", "#if os(iOS)\n    func FIRGameCenterAuthProvider_h")]:
    if text.count(old) != 1:
        sys.exit("SwiftAPI.swift no longer has, once: " + old.splitlines()[-1].strip())
    text = text.replace(old, new)
sys.stdout.write(text)' > .sdk-tests/SwiftApiTests/SwiftAPI.swift

# The project the tests were written against, as their comments describe it: an existing user
# (user+email_existing_user@example.com, password "password"), the test number +12345678910 with
# code 123456, and email enumeration protection on (fetchSignInMethods answers []).
cat > .sdk-tests/project/firebase-export-metadata.json <<'JSON'
{"version": "13.29.1", "auth": {"version": "13.29.1", "path": "auth_export"}}
JSON
cat > .sdk-tests/project/auth_export/accounts.json <<'JSON'
{"kind": "identitytoolkit#DownloadAccountResponse", "users": [
 {"localId": "existing-email-user", "email": "user+email_existing_user@example.com", "emailVerified": false,
  "salt": "fakeSaltExistingUser", "passwordHash": "fakeHash:salt=fakeSaltExistingUser:password=password",
  "passwordUpdatedAt": 1700000000000, "createdAt": "1700000000000", "lastLoginAt": "1700000000000", "validSince": "1700000000",
  "providerUserInfo": [{"providerId": "password", "email": "user+email_existing_user@example.com",
                        "federatedId": "user+email_existing_user@example.com", "rawId": "user+email_existing_user@example.com"}]}
]}
JSON
cat > .sdk-tests/project/auth_export/config.json <<'JSON'
{"signIn": {"allowDuplicateEmails": false, "phoneNumber": {"enabled": true, "testPhoneNumbers": {"+12345678910": "123456"}}},
 "emailPrivacyConfig": {"enableImprovedEmailPrivacy": true}}
JSON

export AUTHSIM_SDK_TESTS=1
swift build --build-tests
swift build --product authsim
.build/debug/authsim exec --import .sdk-tests/project -- swift test --skip-build --filter SDKSwiftApiTests
