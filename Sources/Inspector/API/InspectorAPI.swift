import APNsReceiver
import APNsWire
import AuthBackend
import DeviceLink
import Foundation
import HTTPTypes
import IdentityToolkitAPI
import OpenAPIRuntime
import Utilities

/// The inspector's API as its document (`openapi.json`, beside this file) declares it: the
/// generated ``APIProtocol``, each operation answering one of the statuses the document lists,
/// in the document's types (``Components/Schemas``). The router registers it on Hummingbird
/// (`registerHandlers`), after ``DocumentChecks``.
struct InspectorAPI: APIProtocol {
    let sources: InspectorSources
    /// The document, as served.
    let document: OpenAPIObjectContainer

    // MARK: Pushes

    func listPushes(_ input: Operations.ListPushes.Input) async throws -> Operations.ListPushes.Output {
        let query = input.query
        switch PushFilter.make(token: query.token, topic: query.topic, environment: query.environment?.rawValue, status: query.status,
                               reason: query.reason, search: query.q, since: query.since, after: query.after, limit: query.limit) {
        case .success(let filter): return .ok(.init(body: .json(filter.apply(sources.history.all).map(Self.schema))))
        case .failure(let problem): return .badRequest(.init(body: .json(.problem(.badRequest, problem.message))))
        }
    }

    func latestPush(_ input: Operations.LatestPush.Input) async throws -> Operations.LatestPush.Output {
        let query = input.query
        switch PushFilter.make(token: query.token, topic: query.topic, environment: query.environment?.rawValue, status: query.status,
                               reason: query.reason, search: query.q, since: query.since, after: query.after, limit: query.limit) {
        case .success(let filter):
            guard let latest = filter.apply(sources.history.all).last else { return .notFound(.init(body: .json(.problem(.notFound, "no push matches (yet)")))) }
            return .ok(.init(body: .json(Self.schema(latest))))
        case .failure(let problem): return .badRequest(.init(body: .json(.problem(.badRequest, problem.message))))
        }
    }

    func getPush(_ input: Operations.GetPush.Input) async throws -> Operations.GetPush.Output {
        let id = input.path.id
        guard let push = sources.history.push(id: id) else {
            return .notFound(.init(body: .json(.problem(.notFound, "no push \(id) in view (the view keeps the newest \(sources.history.capacity))"))))
        }
        return .ok(.init(body: .json(Self.schema(push))))
    }

    func clearPushes(_ input: Operations.ClearPushes.Input) async throws -> Operations.ClearPushes.Output {
        sources.history.clear()
        return .noContent(.init())
    }

    func listRejections(_ input: Operations.ListRejections.Input) async throws -> Operations.ListRejections.Output {
        let query = input.query
        switch PushFilter.make(token: query.token, topic: query.topic, environment: query.environment?.rawValue, status: query.status,
                               reason: query.reason, since: query.since, after: query.after, limit: query.limit) {
        case .success(let filter): return .ok(.init(body: .json(filter.apply(sources.history.all.filter { $0.status != 200 }).map(Self.schema))))
        case .failure(let problem): return .badRequest(.init(body: .json(.problem(.badRequest, problem.message))))
        }
    }

    /// Server-Sent Events: a comment, then at most one `pushes` event per 100 ms of at most
    /// ``PushHistory/Subscription/limit`` pushes, so that a watcher costs the receiver (two
    /// cores, shared) a bounded amount whatever the push rate.
    func streamPushes(_ input: Operations.StreamPushes.Input) async throws -> Operations.StreamPushes.Output {
        let events = PushEvents(history: sources.history)
        return .ok(.init(body: .textEventStream(HTTPBody(events, length: .unknown, iterationBehavior: .single))))
    }

    // MARK: Sign-ins

    func listFlows(_ input: Operations.ListFlows.Input) async throws -> Operations.ListFlows.Output {
        var flows = sources.flows.all
        if let phoneNumber = input.query.phoneNumber { flows = flows.filter { $0.phoneNumber == phoneNumber } }
        if let uid = input.query.uid { flows = flows.filter { $0.uid == uid } }
        return .ok(.init(body: .json(flows.suffix(input.query.limit ?? 100).map(Self.schema))))
    }

    func getFlow(_ input: Operations.GetFlow.Input) async throws -> Operations.GetFlow.Output {
        guard let flow = sources.flows.flow(id: input.path.id) else { return .notFound(.init(body: .json(noFlow(input.path.id)))) }
        return .ok(.init(body: .json(Self.schema(flow))))
    }

    /// The sign-in's sequence diagram, drawn by the renderer `authsim run --diagram` uses: the
    /// page shows it as it is.
    func getFlowDiagram(_ input: Operations.GetFlowDiagram.Input) async throws -> Operations.GetFlowDiagram.Output {
        guard let flow = sources.flows.flow(id: input.path.id) else { return .notFound(.init(body: .json(noFlow(input.path.id)))) }
        return .ok(.init(body: .html(HTTPBody(flow.diagram))))
    }

    private func noFlow(_ id: Int) -> Components.Schemas._Error {
        .problem(.notFound, "no flow \(id) (the inspector keeps the newest \(sources.flows.capacity))")
    }

    // MARK: Faults, in push-receiver --fault syntax

    func getFaults(_ input: Operations.GetFaults.Input) async throws -> Operations.GetFaults.Output {
        .ok(.init(body: .json(.init(faults: try await sources.faults.rules().map(\.description)))))
    }

    func putFaults(_ input: Operations.PutFaults.Input) async throws -> Operations.PutFaults.Output {
        guard case .json(let list) = input.body else { return .badRequest(.init(body: .json(.problem(.badRequest, "the body is JSON")))) }
        var rules: [FaultRule] = []
        for (index, text) in list.faults.enumerated() {
            switch Result(catching: { () throws(ReceiverError) in try FaultRule(parsing: text) }) {
            case .success(let rule): rules.append(rule)
            case .failure(let error): return .badRequest(.init(body: .json(.problem(.badRequest, "faults[\(index)]: \(error.message)"))))
            }
        }
        try await sources.faults.change(.replace(rules))
        return .ok(.init(body: .json(.init(faults: rules.map(\.description)))))
    }

    func clearFaults(_ input: Operations.ClearFaults.Input) async throws -> Operations.ClearFaults.Output {
        try await sources.faults.change(.clear)
        return .noContent(.init())
    }

    // MARK: Devices

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        .ok(.init(body: .json(sources.registry.all.map(Self.schema))))
    }

    func addDevice(_ input: Operations.AddDevice.Input) async throws -> Operations.AddDevice.Output {
        guard case .json(let asked) = input.body else { return .badRequest(.init(body: .json(.problem(.badRequest, "the body is JSON")))) }
        guard let environment = APNsEnvironment(rawValue: asked.environment.rawValue) else {
            return .badRequest(.init(body: .json(.problem(.badRequest, "environment is sandbox or production, not \(asked.environment.rawValue)"))))
        }
        guard !asked.bundleID.isEmpty else { return .badRequest(.init(body: .json(.problem(.badRequest, "bundleID is the app's bundle ID")))) }
        var token = DeviceToken.random()
        if let given = asked.token {
            guard let parsed = DeviceToken(hex: given) else {
                return .badRequest(.init(body: .json(.problem(.badRequest, "token \(given) is not an even-length hex device token"))))
            }
            token = parsed
        }
        let device = RegisteredDevice(token: token, environment: environment, bundleID: asked.bundleID, label: asked.label)
        try await sources.registry.apply(.register(device))
        return .ok(.init(body: .json(Self.schema(device))))
    }

    func invalidateDevice(_ input: Operations.InvalidateDevice.Input) async throws -> Operations.InvalidateDevice.Output {
        guard let environment = APNsEnvironment(rawValue: input.path.environment.rawValue) else {
            return .badRequest(.init(body: .json(.problem(.badRequest, "the environment is sandbox or production"))))
        }
        guard let token = DeviceToken(hex: input.path.token) else {
            return .badRequest(.init(body: .json(.problem(.badRequest, "the token is an even-length hex device token, not \(input.path.token)"))))
        }
        let newState: RegisteredDevice.State = input.query._as == .expired ? .expired : .unregistered
        guard try await sources.registry.apply(.invalidate(token, environment: environment, as: newState, at: Date())), let device = sources.registry.lookup(token, in: environment) else {
            return .notFound(.init(body: .json(.problem(.notFound, "no device \(token.hex) in \(environment)"))))
        }
        return .ok(.init(body: .json(Self.schema(device))))
    }

    // MARK: The backend's SMS and users

    private static let noBackend = "no backend in this process"

    func listSMS(_ input: Operations.ListSMS.Input) async throws -> Operations.ListSMS.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        return .ok(.init(body: .json(try await toolkit.sentMessages().map(Self.schema))))
    }

    func listEmails(_ input: Operations.ListEmails.Input) async throws -> Operations.ListEmails.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        return .ok(.init(body: .json(try await toolkit.sentEmails().map(Self.schema))))
    }

    func listUsers(_ input: Operations.ListUsers.Input) async throws -> Operations.ListUsers.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        let search = UserSearch(input.query.q)
        return .ok(.init(body: .json(try await toolkit.exportAccounts().users?.filter(search.matches) ?? [])))
    }

    func createUser(_ input: Operations.CreateUser.Input) async throws -> Operations.CreateUser.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        guard case .json(let body) = input.body else { return .badRequest(.init(body: .json(.problem(.badRequest, "the body is JSON")))) }
        do {
            let edit = try Self.edit(body)
            let claims = try edit.claimsJSON()
            let created = try await toolkit.adminCreateUser(edit.signUp())
            guard let uid = created.localId else { throw IdentityToolkitError(.internal, "the new user came back without an ID") }
            if let claims { _ = try await toolkit.adminUpdate(SetAccountInfoRequest(localId: uid, customAttributes: claims)) }
            guard let user = try await Self.user(uid, in: toolkit) else {
                return .notFound(.init(body: .json(.problem(.notFound, "user \(uid) is gone"))))
            }
            return .created(.init(body: .json(user)))
        } catch {
            switch try Self.refusal(error) {
            case (.notFound, let problem): return .notFound(.init(body: .json(problem)))
            case (.conflict, let problem): return .conflict(.init(body: .json(problem)))
            case (_, let problem): return .badRequest(.init(body: .json(problem)))
            }
        }
    }

    func clearUsers(_ input: Operations.ClearUsers.Input) async throws -> Operations.ClearUsers.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        try await toolkit.deleteAllAccounts()
        return .noContent(.init())
    }

    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        guard let user = try await Self.user(input.path.uid, in: toolkit) else {
            return .notFound(.init(body: .json(.problem(.notFound, "no user \(input.path.uid)"))))
        }
        let trail = UserTrail(of: user, flows: sources.flows.all, pushes: sources.history.all, sms: try await toolkit.sentMessages(), emails: try await toolkit.sentEmails())
        return .ok(.init(body: .json(.init(user: user, flows: trail.flows.map(Self.schema), pushes: trail.pushes.map(Self.schema),
                                           sms: trail.sms.map(Self.schema), emails: trail.emails.map(Self.schema)))))
    }

    func updateUser(_ input: Operations.UpdateUser.Input) async throws -> Operations.UpdateUser.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        guard case .json(let body) = input.body else { return .badRequest(.init(body: .json(.problem(.badRequest, "the body is JSON")))) }
        let uid = input.path.uid
        do {
            let edit = try Self.edit(body)
            _ = try await toolkit.adminUpdate(try edit.update(uid: uid, claims: try edit.claimsJSON()))
        } catch {
            switch try Self.refusal(error) {
            case (.notFound, let problem): return .notFound(.init(body: .json(problem)))
            case (.conflict, let problem): return .conflict(.init(body: .json(problem)))
            case (_, let problem): return .badRequest(.init(body: .json(problem)))
            }
        }
        guard let user = try await Self.user(uid, in: toolkit) else {
            return .notFound(.init(body: .json(.problem(.notFound, "user \(uid) is gone"))))
        }
        return .ok(.init(body: .json(user)))
    }

    func deleteUser(_ input: Operations.DeleteUser.Input) async throws -> Operations.DeleteUser.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        do { _ = try await toolkit.call(ToolkitCalls.adminDelete, DeleteAccountRequest(idToken: nil, localId: input.path.uid)) } catch {
            switch try Self.refusal(error) {
            case (.notFound, let problem): return .notFound(.init(body: .json(problem)))
            case (_, let problem): return .badRequest(.init(body: .json(problem)))
            }
        }
        return .noContent(.init())
    }

    func exportUsers(_ input: Operations.ExportUsers.Input) async throws -> Operations.ExportUsers.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        return .ok(.init(body: .json(try await toolkit.exportAccounts())))
    }

    func importUsers(_ input: Operations.ImportUsers.Input) async throws -> Operations.ImportUsers.Output {
        guard let toolkit = sources.toolkit else { return .notFound(.init(body: .json(.problem(.notFound, Self.noBackend)))) }
        guard case .json(let file) = input.body else { return .badRequest(.init(body: .json(.problem(.badRequest, "the body is JSON")))) }
        do {
            let done = try await toolkit.importAccounts(file.users ?? [], overwrite: input.query.overwrite ?? false)
            return .ok(.init(body: .json(.init(imported: done.imported, replaced: done.replaced))))
        } catch {
            switch try Self.refusal(error) {
            case (.conflict, let problem): return .conflict(.init(body: .json(problem)))
            case (_, let problem): return .badRequest(.init(body: .json(problem)))
            }
        }
    }

    /// The user `uid` as the Admin SDK's lookup answers it (`nil`: no such user).
    static func user(_ uid: String, in toolkit: IdentityToolkit) async throws -> UserRecord? {
        try await toolkit.call(ToolkitCalls.adminLookup, GetAccountInfoRequest(localId: [uid])).users?.first
    }

    /// The API's body as the rules' value.
    static func edit(_ body: Components.Schemas.UserChange) throws(UserEdit.Refusal) -> UserEdit {
        var claims: [String: JSONValue]?
        if let given = body.customClaims {
            do { claims = try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(given)) } catch {
                throw UserEdit.Refusal(message: "customClaims is not a JSON object")
            }
        }
        return UserEdit(localId: body.localId, email: body.email, password: body.password, phoneNumber: body.phoneNumber, displayName: body.displayName,
                        photoUrl: body.photoUrl, emailVerified: body.emailVerified, disabled: body.disabled, customClaims: claims)
    }

    enum RefusalKind { case badRequest, notFound, conflict }

    /// A refused change as the API answers it: a user that is not there 404, an email, phone
    /// number or ID another user has 409, the rest 400, with the service's code and message. The
    /// backend's own failures (5xx) are rethrown.
    static func refusal(_ error: any Error) throws -> (RefusalKind, Components.Schemas._Error) {
        switch error {
        case let refusal as UserEdit.Refusal: return (.badRequest, .problem(.badRequest, refusal.message))
        // The backend's own failure (its state out of reach): not a refusal of the request; the
        // error middleware answers it with its status.
        case let error as IdentityToolkitError where error.httpStatus >= 500: throw error
        case let error as IdentityToolkitError:
            switch error.code {
            case .userNotFound: return (.notFound, .problem(.notFound, error.message))
            case .emailExists: return (.conflict, .problem(.conflict, "\(error.message): another user has this email"))
            case .phoneNumberExists: return (.conflict, .problem(.conflict, "\(error.message): another user has this phone number"))
            case .duplicateLocalID: return (.conflict, .problem(.conflict, error.message))
            default: return (.badRequest, .problem(.badRequest, error.message))
            }
        default: return (.badRequest, .problem(.badRequest, "\(error)"))
        }
    }

    // MARK: Operations

    func openAPI(_ input: Operations.OpenAPI.Input) async throws -> Operations.OpenAPI.Output {
        .ok(.init(body: .json(document)))
    }

    func metrics(_ input: Operations.Metrics.Input) async throws -> Operations.Metrics.Output {
        .ok(.init(body: .textPlainCharsetUtf8Version_0_0_4(HTTPBody(await Metrics.text(sources)))))
    }

    func livez(_ input: Operations.Livez.Input) async throws -> Operations.Livez.Output {
        .ok(.init(body: .plainText(HTTPBody("ok\n"))))
    }

    func readyz(_ input: Operations.Readyz.Input) async throws -> Operations.Readyz.Output {
        sources.ready() ? .ok(.init(body: .plainText(HTTPBody("ready\n")))) : .serviceUnavailable(.init(body: .plainText(HTTPBody("starting\n"))))
    }

    // MARK: The document's types from ours

    static func schema(_ push: InspectedPush) -> Components.Schemas.Push {
        .init(id: push.id, time: push.time, environment: push.environment == .production ? .production : .sandbox, apnsID: push.apnsID,
              deviceToken: push.deviceToken, topic: push.topic, pushType: push.pushType, priority: push.priority, expiration: push.expiration,
              collapseID: push.collapseID, status: push.status, reason: push.reason, detail: push.detail, injected: push.injected,
              dropped: push.dropped, payload: push.payload, headers: push.headers.map { .init(name: $0.name, value: $0.value) },
              providerToken: push.providerToken.map { .init(alg: $0.alg, kid: $0.kid, iss: $0.iss, iat: $0.iat, verdict: $0.verdict) },
              cause: push.cause, fix: push.fix, device: push.device, node: push.node)
    }

    static func schema(_ flow: InspectedFlow) -> Components.Schemas.Flow {
        .init(id: flow.id, signIn: flow.signIn, started: flow.started, phoneNumber: flow.phoneNumber, uid: flow.uid, proof: flow.proof.map(schema),
              secondFactor: flow.secondFactor, path: flow.path, outcome: flow.outcome.description, error: flow.outcome.error?.rawValue, cause: flow.cause, fix: flow.fix,
              steps: flow.steps.map { step in
                  .init(time: step.time, from: schema(step.from), to: step.to.map(schema), message: step.message, bad: step.bad, event: step.event,
                        node: step.node)
              }, deviceToken: flow.deviceToken)
    }

    static func schema(_ proof: AppVerification) -> Components.Schemas.Flow.ProofPayload {
        switch proof {
        case .silentPush: .silentPush
        case .reCAPTCHA: .reCAPTCHA
        case .recaptchaEnterprise: .recaptchaEnterprise
        case .testMode: .testMode
        case .unverified: .unverified
        }
    }

    static func schema(_ party: BackendEvent.Party) -> Components.Schemas.Flow.StepsPayloadPayload.FromPayload {
        switch party {
        case .app: .app
        case .backend: .backend
        case .apns: .apns
        }
    }

    static func schema(_ party: BackendEvent.Party) -> Components.Schemas.Flow.StepsPayloadPayload.ToPayload {
        switch party {
        case .app: .app
        case .backend: .backend
        case .apns: .apns
        }
    }

    static func schema(_ device: RegisteredDevice) -> Components.Schemas.Device {
        .init(token: device.token.hex, environment: device.environment.rawValue, bundleID: device.bundleID,
              state: Components.Schemas.Device.StatePayload(rawValue: device.state.rawValue), invalidSince: device.invalidSince.map(Int.init),
              label: device.label)
    }

    static func schema(_ sent: (email: OobEmail, used: Bool)) -> Components.Schemas.Email {
        .init(email: sent.email.email, code: sent.email.code, requestType: sent.email.requestType.rawValue, newEmail: sent.email.newEmail,
              link: sent.email.link, sentAt: sent.email.sentAt, used: sent.used)
    }

    static func schema(_ message: SMSMessage) -> Components.Schemas.Sms {
        .init(phoneNumber: message.phoneNumber, code: message.code, sessionInfo: message.sessionInfo, languageCode: message.languageCode,
              text: message.text, sentAt: message.sentAt)
    }
}

extension Components.Schemas._Error {
    /// The API's error body, `{"error": {"code", "message"}}`.
    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Self {
        .init(error: .init(code: status.code, message: message))
    }
}

/// The live stream's bytes: its opening comment, then one `pushes` event per batch. Each batch
/// is asked for when the transport wants the next bytes, 100 ms after the last; the subscription
/// ends when the client goes (the stream is no longer read) or the inspector stops.
struct PushEvents: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let history: PushHistory

    final class AsyncIterator: AsyncIteratorProtocol {
        let history: PushHistory
        let subscription: PushHistory.Subscription
        var opened = false
        var sent = false

        init(history: PushHistory) {
            self.history = history
            subscription = history.subscribe()
        }
        deinit { history.unsubscribe(subscription) }

        func next() async throws -> ArraySlice<UInt8>? {
            guard opened else {
                opened = true
                return ArraySlice(": authsim inspector: `pushes` events, each {\"pushes\": [...], \"skipped\": N}\n\n".utf8)
            }
            if sent { try await Task.sleep(for: .milliseconds(100)) }
            sent = true
            guard let (pushes, skipped) = await history.next(of: subscription) else { return nil }
            let batch = Components.Schemas.EventBatch(pushes: pushes.map(InspectorAPI.schema), skipped: skipped)
            let data = String(decoding: try InspectorRouter.encode(batch), as: UTF8.self)
            return ArraySlice("event: pushes\nid: \(pushes.last?.id ?? 0)\ndata: \(data)\n\n".utf8)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(history: history) }
}
