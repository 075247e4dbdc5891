#!/bin/sh
# FirebaseAuth's own integration tests (FirebaseAuth/Tests/SampleSwift/SwiftApiTests at the contract
# commit), run unchanged on Linux: built against `import FirebaseAuth` here and run by `authsim exec`
# with a test host and the project they expect, seeded as the Auth Emulator is (an export folder).
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
