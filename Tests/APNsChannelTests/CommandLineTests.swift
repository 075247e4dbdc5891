import APNsReceiver
import APNsWire
import CommandSupport
import LocalPKI
import Foundation
import Glibc
import Utilities
import TestSupport
import Testing

@Suite("The command lines, as real processes")
struct CommandLineTests {
    @Test("push-receiver and apns-sender as separate processes: registry CLI, both environments, exit codes, JSON, SIGTERM")
    func processes() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certs = folder.appendingPathComponent("Certs").path
        let state = folder.appendingPathComponent("State").path
        let token = DeviceToken.random().hex
        let payload = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Payloads/firebase-auth-silent.apns").standardized.path

        let added = try await runProgram([try executable("push-receiver"), "devices", "add", "--state", state,
                                          "--environment", "sandbox", "--bundle", "com.example.authsim", "--token", token])
        #expect(added.status == 0)

        let receiver = try ServerProcess([try executable("push-receiver"), "--certs", certs, "--state", state,
                                          "--sandbox-port", "0", "--production-port", "0", "--no-device-gateway"])
        defer { receiver.stop() }
        let banner = try await receiver.waitFor("delivery log:")
        func port(_ environment: String) throws -> String {
            let line = try #require(banner.first { $0.contains("→ \(environment)") })
            return String(try #require(line.split(separator: ":").last?.split(separator: " ").first))
        }
        #expect(banner.contains { $0.contains("trusting provider keys") })
        #expect(banner.contains { $0.contains("(1 registered)") })

        let sender = try executable("apns-sender")
        let ok = try await runProgram([sender, payload, "--token", token, "--certs", certs, "--port", try port("sandbox"), "--json"])
        #expect(ok.status == 0)
        let first = try #require(ok.output.split(separator: "\n").first)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(answer["status"] as? Int == 200)
        #expect(answer["apns-unique-id"] != nil)
        // The same name as the delivery and rejection logs' (issue 19: it was "token" here).
        #expect(answer["device-token"] as? String == token.lowercased())

        let mismatch = try await runProgram([sender, payload, "--token", token, "--certs", certs, "--environment", "production",
                                             "--local", "--port", try port("production")])
        #expect(mismatch.status == 1)
        #expect(mismatch.output.contains("400"))
        #expect(mismatch.output.contains("reason=BadDeviceToken"))

        let nobody = try await runProgram([sender, payload, "--token", token, "--certs", certs, "--port", "1"])
        #expect(nobody.status == 2)
        #expect(nobody.output.contains("is it running?"))

        #expect(try await receiver.terminate() == 0)
        #expect(try await receiver.waitFor("shutting down").count > 0)
        // Each log: its format stamp, then one line.
        let log = try String(contentsOfFile: state + "/deliveries.jsonl", encoding: .utf8)
        #expect(log.split(separator: "\n").count == 2 && log.hasPrefix(DeliveryLog.format.stamp.line))
        let rejections = try String(contentsOfFile: state + "/rejections.jsonl", encoding: .utf8)
        #expect(rejections.split(separator: "\n").count == 2 && rejections.hasPrefix(RejectionLog.format.stamp.line))
        #expect(rejections.contains(#""reason":"BadDeviceToken""#))
        // The topic the refused push named, as the delivery log keeps it for accepted ones.
        #expect(rejections.contains(#""topic":"com.example.authsim""#), "\(rejections)")
        // Times with milliseconds, as the delivery log writes them (issue 19: seconds here, ms there).
        #expect(rejections.range(of: #""time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z""#, options: .regularExpression) != nil, "\(rejections)")
        #expect(log.range(of: #""time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z""#, options: .regularExpression) != nil, "\(log)")

        // What the receiver saw, explained: the sandbox token sent to production.
        // A rejection fails a CI step by default (issue 19: it exited 0); --fail-on none only reports.
        let explained = try await runProgram([try executable("authsim"), "explain", "--receiver-state", state])
        #expect(explained.status == 1)
        #expect(explained.output.contains("1 accepted (0 of them dropped by a fault), 1 rejected"))
        #expect(explained.output.contains("1 × pushes were rejected by production with BadDeviceToken: their tokens were issued in sandbox (debug builds)"))
        #expect(explained.output.contains("setAPNSToken(token, type: .sandbox)"))
        #expect(explained.output.contains("exit status 1: --fail-on rejected dropped"))
        let reportOnly = try await runProgram([try executable("authsim"), "explain", "--receiver-state", state, "--fail-on", "none"])
        #expect(reportOnly.status == 0)
        let badFailOn = try await runProgram([try executable("authsim"), "explain", "--receiver-state", state, "--fail-on", "sometimes"])
        #expect(badFailOn.status != 0 && badFailOn.status != 1)
    }

    @Test("push-receiver devices changes a running receiver's registry at once: the next push sees it, for tokens it has seen too")
    func liveDeviceChanges() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certs = folder.appendingPathComponent("Certs").path
        let state = folder.appendingPathComponent("State").path
        let receiverPath = try executable("push-receiver")
        let token = DeviceToken.random().hex
        let payload = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Payloads/firebase-auth-silent.apns").standardized.path
        #expect(try await runProgram([receiverPath, "devices", "add", "--state", state, "--environment", "sandbox", "--bundle", "com.example.authsim",
                                      "--token", token]).status == 0)
        let receiver = try ServerProcess([receiverPath, "--certs", certs, "--state", state, "--sandbox-port", "0", "--production-port", "0",
                                          "--no-device-gateway"])
        defer { receiver.stop() }
        let banner = try await receiver.waitFor("delivery log:")
        let line = try #require(banner.first { $0.contains("→ sandbox") })
        let port = String(try #require(line.split(separator: ":").last?.split(separator: " ").first))
        func push(_ to: String) async throws -> String {
            try await runProgram([try executable("apns-sender"), payload, "--token", to, "--certs", certs, "--port", port]).output
        }
        #expect(try await push(token).contains("1 accepted, 0 rejected"))
        // Each change, then at once a push: the answer the inspector's API would give.
        let invalidated = try await runProgram([receiverPath, "devices", "invalidate", "--state", state, "--environment", "sandbox", "--token", token])
        #expect(invalidated.status == 0, "\(invalidated.output)")
        #expect(try await push(token).contains("reason=Unregistered"))
        #expect(try await runProgram([receiverPath, "devices", "add", "--state", state, "--environment", "sandbox", "--bundle", "com.example.authsim",
                                      "--token", token]).status == 0)
        #expect(try await push(token).contains("1 accepted, 0 rejected"))
        #expect(try await runProgram([receiverPath, "devices", "invalidate", "--state", state, "--environment", "sandbox", "--token", token,
                                      "--as", "expired"]).status == 0)
        #expect(try await push(token).contains("reason=ExpiredToken"))
        #expect(try await runProgram([receiverPath, "devices", "remove", "--state", state, "--environment", "sandbox", "--token", token]).status == 0)
        #expect(try await push(token).contains("reason=BadDeviceToken"))
        // The receiver wrote each change to devices.json; the command's answer for an unknown token is the API's 404.
        let unknown = try await runProgram(["sh", "-c", "\"$0\" devices remove --state \"$1\" --environment sandbox --token \(token) 2>&1", receiverPath, state])
        #expect(unknown.status != 0 && unknown.output.contains("is not registered in sandbox"), "\(unknown.output)")
        let listed = try await runProgram([receiverPath, "devices", "list", "--state", state])
        #expect(listed.output.contains("no devices"), "\(listed.output)")
        // A second receiver on the same --state is refused (each would keep its own copy).
        let second = try await runProgram(["sh", "-c", "\"$0\" --certs \"$1\" --state \"$2\" --sandbox-port 0 --production-port 0 --no-device-gateway 2>&1",
                                           receiverPath, certs, state])
        #expect(second.status != 0 && second.output.contains("another push-receiver (pid"), "\(second.output)")

        // Stopped: the command changes the file itself (the pointer is gone, or stale after a kill).
        #expect(try await receiver.terminate() == 0)
        #expect(!FileManager.default.fileExists(atPath: state + "/push-receiver.json"))
        #expect(try await runProgram([receiverPath, "devices", "add", "--state", state, "--environment", "sandbox", "--bundle", "com.example.authsim",
                                      "--token", token]).status == 0)
        #expect(try String(contentsOfFile: state + "/devices.json", encoding: .utf8).contains(token.lowercased()))
    }

    @Test("authsim serve --p8: the backend's key is yours, push-receiver trusts it (not --certs's), the ready file names it")
    func serveWithOwnKey() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = APNsAuthKey.generate()
        let p8 = folder.appendingPathComponent(key.fileName)
        try key.p8PEM.write(to: p8, atomically: true, encoding: .utf8)
        let certs = folder.appendingPathComponent("Certs").path
        let state = folder.appendingPathComponent("State").path
        let ready = folder.appendingPathComponent("ready.json")
        let serve = try ServerProcess([try executable("authsim"), "serve", "--p8", p8.path, "--team-id", key.teamID, "--state", state, "--certs", certs,
                                       "--sandbox-port", "0", "--production-port", "0", "--device-port", "0", "--backend-port", "0", "--ui-port", "0",
                                       "--ready-file", ready.path])
        defer { serve.stop() }
        let banner = try await serve.waitFor("Ctrl-C stops everything")
        #expect(banner.contains { $0.contains("key \(key.keyID), team \(key.teamID), \(p8.path)") }, "\(banner)")
        let addresses = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: ready)) as? [String: String])
        #expect(addresses["authKeyFile"] == p8.path && addresses["keyID"] == key.keyID && addresses["teamID"] == key.teamID)
        let port = try #require(addresses["sandbox"]?.split(separator: ":").last.map(String.init))
        let token = DeviceToken.random().hex
        #expect(try await runProgram([try executable("push-receiver"), "devices", "add", "--state", state, "--environment", "sandbox",
                                      "--bundle", "com.example.authsim", "--token", token]).status == 0)
        let payload = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Payloads/firebase-auth-silent.apns").standardized.path
        let sender = try executable("apns-sender")
        let mine = try await runProgram([sender, payload, "--token", token, "--certs", certs, "--port", port, "--p8", p8.path, "--team-id", key.teamID])
        #expect(mine.output.contains("1 accepted"), "\(mine.output)")
        let theirs = try await runProgram([sender, payload, "--token", token, "--certs", certs, "--port", port])
        #expect(theirs.output.contains("reason=InvalidProviderToken"), "\(theirs.output)")
        let half = try await runProgram(["sh", "-c", "\"$0\" serve --p8 \"$1\" --state \"$2/x\" --certs \"$2/c\" 2>&1", try executable("authsim"), p8.path, folder.path])
        #expect(half.status != 0 && half.output.contains("--p8 needs --team-id"), "\(half.output)")
        #expect(try await serve.terminate() == 0)
    }

    @Test("authsim exec: the command gets the test host, the emulator host and the project; exec exits with its status and leaves no state")
    func execRunsTheTestCommand() async throws {
        let authsim = try executable("authsim")
        let script = #"cat "$AUTHSIM_TEST_HOST"; echo "emulator=$FIREBASE_AUTH_EMULATOR_HOST project=$GCLOUD_PROJECT"; echo "state=$(dirname "$AUTHSIM_TEST_HOST")"; exit 3"#
        let run = try await runProgram([authsim, "exec", "--backend-port", "0", "--project-id", "exec-project", "--", "sh", "-c", script])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("authsim exec: the test command exited with status 3"), "\(run.output)")
        #expect(run.output.contains(#""format" : "authsim-test-host""#) && run.output.contains(#""delegate" : "configures""#), "\(run.output)")
        #expect(run.output.contains(#""apnsEnvironment" : "sandbox""#), "the default host app is signed for development: \(run.output)")
        #expect(run.output.contains("project=exec-project") && run.output.contains("emulator=127.0.0.1:"), "\(run.output)")
        let state = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("state=") }).dropFirst("state=".count)
        #expect(!FileManager.default.fileExists(atPath: String(state)), "exec removes the state folder it made")

        let emulator = try await runProgram([authsim, "exec", "--backend-port", "0", "--uses-emulator", "--", "sh", "-c", #"grep -c usesEmulator "$AUTHSIM_TEST_HOST""#])
        #expect(emulator.status == 0 && emulator.output.contains("its delegate calls useEmulator"), "\(emulator.output)")
        let none = try await runProgram(["sh", "-c", "\"$0\" exec --backend-port 0 2>&1", authsim])
        #expect(none.status != 0 && none.output.contains("give the test command after --"), "\(none.output)")
        let missing = try await runProgram(["sh", "-c", "\"$0\" exec --backend-port 0 -- /nonexistent/command 2>&1", authsim])
        #expect(missing.status != 0 && missing.output.contains("cannot start /nonexistent/command"), "\(missing.output)")
    }

    @Test("every executable says the one version (Utilities.AuthsimVersion) with --version, and exits 0")
    func versions() async throws {
        for name in ["authsim", "push-receiver", "apns-sender", "redirect-interceptor"] {
            let result = try await runProgram([try executable(name), "--version"])
            #expect(result.status == 0, "\(name)")
            #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == AuthsimVersion.current, "\(name): \(result.output)")
        }
    }

    @Test("authsim started under another program's name (the release bundle's links) is that program: the same help, and redirect-interceptor registers the link, not authsim")
    func multiCall() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authsim = try executable("authsim")
        for name in ["push-receiver", "apns-sender", "redirect-interceptor"] {
            let link = folder.appendingPathComponent(name).path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: authsim)
            let own = try await runProgram([try executable(name), "--help"])
            let linked = try await runProgram([link, "--help"])
            #expect(own.status == 0 && linked.status == 0)
            #expect(linked.output == own.output, "\(name)")
        }
        let xdg = folder.appendingPathComponent("xdg").path
        let scheme = "app-1-123456789012-ios-a1b2c3d4e5f60718"
        let registered = try await runProgram(["env", "XDG_DATA_HOME=\(xdg)/data", "XDG_CONFIG_HOME=\(xdg)/config",
                                               folder.appendingPathComponent("redirect-interceptor").path, "register",
                                               "--runtime-dir", folder.appendingPathComponent("run").path, scheme])
        #expect(registered.status == 0, "\(registered.output)")
        let entry = try String(contentsOfFile: "\(xdg)/data/applications/authsim-redirect-\(scheme).desktop", encoding: .utf8)
        #expect(entry.contains("Exec=\(folder.appendingPathComponent("redirect-interceptor").path) open"), "\(entry)")
    }

    @Test("a port that is taken, or not a port, is refused with the option that moves it")
    func portErrors() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A port held by another listener (this process's socket).
        let held = try HeldPort()
        defer { held.release() }  // Held (and alive) to the end of the test.
        let taken = String(held.port)
        let authsim = try executable("authsim")
        let serve = try await runProgram(["sh", "-c", "\"$0\" serve --ui-port \(taken) --sandbox-port 0 --production-port 0 --device-port 0 --backend-port 0 --state \"$1/state\" --certs \"$1/certs\" 2>&1",
                                          authsim, folder.path])
        #expect(serve.status == 1, "\(serve.output)")
        #expect(serve.output.contains("the inspector cannot listen on 127.0.0.1:\(taken): the port is already in use"), "\(serve.output)")
        #expect(serve.output.contains("pass another --ui-port (0: any free port)") && !serve.output.contains(")) ("), "\(serve.output)")
        let receiver = try await runProgram(["sh", "-c", "\"$0\" --sandbox-port 0 --production-port \(taken) --no-device-gateway --state \"$1/state\" --certs \"$1/certs\" 2>&1",
                                             try executable("push-receiver"), folder.path])
        #expect(receiver.status == 1, "\(receiver.output)")
        #expect(receiver.output.contains("push-receiver (production) cannot listen on 127.0.0.1:\(taken)") && receiver.output.contains("--production-port"),
                "\(receiver.output)")
        let backend = try await runProgram(["sh", "-c", "\"$0\" backend --port \(taken) --state \"$1/backend\" --certs \"$1/certs\" 2>&1", authsim, folder.path])
        #expect(backend.status == 1 && backend.output.contains("pass another --port"), "\(backend.output)")
        // A second serve on a first one's ports: every conflict in one refusal, before anything starts.
        let other = try HeldPort()
        defer { other.release() }
        let takenToo = String(other.port)
        let both = try await runProgram(["sh", "-c", "\"$0\" serve --ui-port \(taken) --backend-port \(takenToo) --sandbox-port 0 --production-port 0 --device-port 0 --state \"$1/state2\" --certs \"$1/certs\" 2>&1",
                                         authsim, folder.path])
        #expect(both.status == 1 && both.output.contains("2 ports cannot be listened on"), "\(both.output)")
        #expect(both.output.contains("the inspector cannot listen on 127.0.0.1:\(taken)") && both.output.contains("pass another --ui-port"), "\(both.output)")
        #expect(both.output.contains("the backend cannot listen on 127.0.0.1:\(takenToo)") && both.output.contains("pass another --backend-port"), "\(both.output)")
        // 70000 is not a port (it was taken modulo 65536: 4464).
        let outOfRange = try await runProgram(["sh", "-c", "\"$0\" serve --ui-port 70000 --state \"$1/state\" --certs \"$1/certs\" 2>&1", authsim, folder.path])
        #expect(outOfRange.status != 0 && outOfRange.output.contains("--ui-port 70000 is not a port: 0 to 65535"), "\(outOfRange.output)")
    }

    @Test("advice names the program as the user runs it: swift run from a build folder, the name on PATH, else the release's path")
    func invocations() {
        #expect(invocation(of: "push-receiver", executable: "/work/main/.build/x86_64-unknown-linux-gnu/debug/authsim", path: "/usr/bin") == "swift run push-receiver")
        #expect(invocation(of: "push-receiver", executable: "/opt/venv/bin/authsim", path: "/usr/bin:/opt/venv/bin") == "push-receiver")
        #expect(invocation(of: "authsim", executable: "/tmp/authsim-0.1.0-linux-x86_64/bin/authsim", path: "/usr/bin")
                == "/tmp/authsim-0.1.0-linux-x86_64/bin/authsim")
        // The wheel: its console script execs the bundled binary and names itself (AUTHSIM_LAUNCHER).
        let bundled = "/opt/venv/lib/python3.11/site-packages/authsim/_bundle/bin/authsim"
        #expect(invocation(of: "authsim", executable: bundled, path: "/usr/bin:/opt/venv/bin", launcher: "/opt/venv/bin/authsim") == "authsim")
        #expect(invocation(of: "push-receiver", executable: bundled, path: "/usr/bin", launcher: "/opt/venv/bin/authsim") == "/opt/venv/bin/push-receiver")
    }

    @Test("bad options get clear errors, not crashes")
    func badOptions() async throws {
        let sender = try executable("apns-sender")
        let noToken = try await runProgram([sender, "x.json"])
        #expect(noToken.status != 0)
        let badPriority = try await runProgram([sender, "x.json", "--token", "ab", "--priority", "7"])
        #expect(badPriority.status != 0)
        let receiver = try executable("push-receiver")
        let badFault = try await runProgram([receiver, "--fault", "explode", "--certs", temporaryDirectory(#function).path])
        #expect(badFault.status != 0)
        let noThreads = try await runProgram(["sh", "-c", "'\(receiver)' --threads 0 --certs '\(temporaryDirectory(#function).path)' 2>&1"])
        #expect(noThreads.status != 0)
        #expect(noThreads.output.contains("--threads must be between 1 and 256, not 0"))
    }

    /// Runs `arguments` with its standard output a pipe whose reader has already gone and SIGPIPE
    /// ignored, as SwiftNIO leaves it: the program's first write meets EPIPE. Its exit status as
    /// Python reports it (-13: ended by SIGPIPE) and what it wrote to standard error.
    static func onClosedPipe(_ arguments: [String]) async throws -> (status: Int, stderr: String) {
        let script = """
            import os, subprocess, sys
            r, w = os.pipe(); os.close(r)
            done = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, restore_signals=False, timeout=120)
            print(done.returncode); sys.stdout.write(done.stderr.decode(errors="replace"))
            """
        let run = try await runProgram(["python3", "-c", script] + arguments)
        let lines = run.output.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        return (Int(lines.first ?? "") ?? 0, lines.count > 1 ? String(lines[1]) : "")
    }

    // `authsim explain run.jsonl | head -1` trapped in FileHandle.write (try! on EPIPE), status 132.
    @Test("a closed pipe on standard output ends every program quietly, as SIGPIPE (141 in the shell), never a trap")
    func closedPipe() async throws {
        let state = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: state) }
        _ = try await runProgram([try executable("push-receiver"), "devices", "add", "--state", state.path,
                                  "--environment", "sandbox", "--bundle", "com.example.authsim"])
        for arguments in [[try executable("authsim"), "demo", "--list"],
                          [try executable("push-receiver"), "devices", "list", "--state", state.path],
                          [try executable("apns-sender"), "--print-token", "--certs", state.appendingPathComponent("Certs").path]] {
            let ended = try await Self.onClosedPipe(arguments)
            #expect(ended.status == -Int(SIGPIPE), "\(arguments.dropFirst()): \(ended)")
            #expect(ended.stderr.isEmpty, "\(arguments.dropFirst()): \(ended.stderr)")
        }
    }

    // ArgumentParser prints a ValidationError thrown in run() with the root's usage.
    @Test("an error found once a subcommand runs names the subcommand: its usage and its --help, status 64")
    func errorsNameTheSubcommand() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try await runProgram(["sh", "-c", #"exec "$0" "$@" 2>&1"#, try executable("authsim"), "backend", "--port", "0",
                                        "--certs", folder.appendingPathComponent("Certs").path, "--state", folder.appendingPathComponent("State").path,
                                        "--recaptcha-enforcement", "sometimes"])
        #expect(run.status == 64, "\(run.output)")
        #expect(run.output.contains("Error: --recaptcha-enforcement is off, audit or enforce, not sometimes"), "\(run.output)")
        #expect(run.output.contains("Usage: authsim backend ") && run.output.contains("See 'authsim backend --help'"), "\(run.output)")
        #expect(!run.output.contains("<subcommand>"), "\(run.output)")
    }

    @Test("authsim docs: the README and every docs/ page by name, one printed whole; the release's layout found beside bin/")
    func docs() async throws {
        let authsim = try executable("authsim")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
        let listed = try await runProgram([authsim, "docs"])
        #expect(listed.status == 0 && listed.output.contains(root.appendingPathComponent("docs").path), "\(listed.output)")
        for page in ["README", "security", "fleet", "auth-emulator"] {
            #expect(listed.output.contains("  \(page) "), "\(page): \(listed.output)")
        }
        let page = try await runProgram([authsim, "docs", "docs/fleet.md"])
        let fleet = try String(contentsOf: root.appendingPathComponent("docs/fleet.md"), encoding: .utf8)
        #expect(page.status == 0 && page.output == fleet)
        let path = try await runProgram([authsim, "docs", "--path"])
        #expect(path.output == root.path + "\n")

        // The release: README.md and docs/ beside bin/.
        let release = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: release) }
        try FileManager.default.createDirectory(at: release.appendingPathComponent("docs"), withIntermediateDirectories: true)
        try "# authsim\n".write(to: release.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
        try "# Security\n".write(to: release.appendingPathComponent("docs/security.md"), atomically: true, encoding: .utf8)
        let found = try #require(Documentation.find(executable: release.appendingPathComponent("bin/authsim").path))
        #expect(found.root.standardizedFileURL.path == release.standardizedFileURL.path)
        #expect(found.pages().map(\.name) == ["README", "security"] && found.page(named: "Security.md")?.title == "Security")
        #expect(Documentation.find(executable: "/nonexistent/bin/authsim") == nil)
    }
}
