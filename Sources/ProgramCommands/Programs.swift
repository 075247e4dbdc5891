import CommandSupport

/// The command lines of push-receiver, apns-sender and redirect-interceptor, as a library: each
/// program's own executable is one call into it, and so is `authsim` when it is started under one
/// of their names (the release bundle's `bin/push-receiver` is a link to `authsim`: one binary
/// instead of four, about a quarter of the size, since each would carry Foundation's ICU data).
package enum Programs {
    /// Runs the program called `name` (one of ``names``) with the process's arguments; `false` for
    /// any other name.
    package static func run(named name: String) async -> Bool {
        switch name {
        case "push-receiver": await runCommand(PushReceiverCommand.self)
        case "apns-sender": await runCommand(APNsSenderCommand.self)
        case "redirect-interceptor": await runCommand(RedirectInterceptorCommand.self)
        default: return false
        }
        return true
    }
}
