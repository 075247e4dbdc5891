import Crypto
import CryptoExtras
import Foundation
import IdentityToolkitAPI
import Utilities

/// Passwords' hashes, made and checked beside the actor: scrypt (N = 2^14, r = 8, p = 1: 16 MB,
/// tens of milliseconds) runs on the global executor, never on the actor or an event loop. The
/// salt is the call's, drawn by the core from the call's source of randomness
/// (``BackendCore/passwordSalt()``), so that a seeded run gives the same records.
enum PasswordHashing {
    /// scrypt's N; the hash's prefix names the parameters, so that a record says how it was made.
    static let rounds = 16_384
    static let prefix = "authsim-scrypt:N=16384,r=8,p=1:"

    /// `password` hashed with `salt`.
    static func hash(_ password: String, salt: [UInt8]) async -> PasswordHash {
        let key = await scrypt(password, salt: salt)
        return PasswordHash(hash: prefix + Data(key).base64EncodedString(), salt: Data(salt).base64EncodedString())
    }

    /// Whether `password` is the one `hash` was made from: this backend's scrypt hashes, and the
    /// Auth Emulator's `fakeHash:salt=…:password=…` (an emulator export), compared in constant time.
    /// A hash of any other kind (an import from Firebase) cannot be checked: no password matches.
    static func matches(_ password: String, hash: String, salt: String?) async -> Bool {
        if hash.hasPrefix(prefix) {
            guard let salt, let saltBytes = Data(base64Encoded: salt),
                  let expected = Data(base64Encoded: String(hash.dropFirst(prefix.count))) else { return false }
            return ConstantTime.equals(Array(expected), await scrypt(password, salt: Array(saltBytes)))
        }
        if hash.hasPrefix("fakeHash:") {
            return ConstantTime.equals(hash, "fakeHash:salt=\(salt ?? ""):password=\(password)")
        }
        return false
    }

    /// scrypt's key for `password`, derived on the global executor: the backend's connections run
    /// on their event loops (HTTPServerSupport's EventLoopBoundChannel), and tens of milliseconds
    /// of scrypt there would hold up every connection of that loop.
    private static func scrypt(_ password: String, salt: [UInt8]) async -> [UInt8] {
        await withTaskExecutorPreference(globalConcurrentExecutor) {
            // Parameters this fixed always derive (BoringSSL refuses only out-of-range ones).
            guard let key = try? KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: rounds,
                                                      blockSize: 8, parallelism: 1) else { return [] }
            return key.withUnsafeBytes { Array($0) }
        }
    }
}

extension IdentityToolkit {
    /// The hash of a password a call sets (nil for none), its salt drawn by the core.
    func passwordHash(_ password: String?) async throws(IdentityToolkitError) -> PasswordHash? {
        guard let password else { return nil }
        let salt = try check { core throws(IdentityToolkitError) in core.passwordSalt() }
        return await PasswordHashing.hash(password, salt: salt)
    }
}

/// A password's hash and salt as a user record keeps them (made by ``PasswordHashing``).
struct PasswordHash: Sendable {
    let hash: String
    let salt: String
}
