@testable import APNsReceiver
import APNsWire
import DeviceLink
import Foundation
import Synchronization
import Testing
import Utilities

/// The receiver's hand-off to the device side (`DeliveryQueue`, issue 27): pushes gather while a
/// batch is handed over and go on as the next, in the order APNs accepted them.
@Suite("The receiver's batched hand-off to the device side")
struct DeliveryQueueTests {
    /// The apns-ids a connected device got, in order, and waits for a count.
    final class Sink: Sendable {
        private let state = Mutex<(ids: [String], waiters: Waiters<Int>)>(([], Waiters()))
        func add(_ id: String) {
            let ready = state.withLock { state in
                state.ids.append(id)
                return state.waiters.ready(for: state.ids.count)
            }
            for waiter in ready { waiter.resume() }
        }
        var ids: [String] { state.withLock { $0.ids } }
        func wait(count: Int) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state in state.waiters.add({ $0 >= count }, continuation, now: state.ids.count) }
                if !waits { continuation.resume() }
            }
        }
    }

    @Test("pushes accepted while the hub is paused wait, then reach the device in the order accepted, none lost or doubled")
    func inOrderAcrossBatches() async {
        let hub = DeviceHub()
        await hub.setPaused(true)
        let sink = Sink()
        let token = DeviceToken(hex: "ab12")!
        _ = await hub.connect(token: token, environment: .sandbox) { sink.add($0.apnsID) }
        let queue = DeliveryQueue(handler: hub)
        let ids = (0..<200).map { "push-\($0)" }
        for (index, id) in ids.enumerated() {
            var push = DeviceGatewayTests.push
            push.apnsID = id
            push.deviceToken = token
            queue.enqueue(.push(push))
            if index == 100 { await hub.setPaused(false) }
        }
        await sink.wait(count: ids.count)
        #expect(sink.ids == ids)
    }

    /// A batch as the receiver hands it over: background pushes to `token`, and an alert after the first.
    static func batch(to token: DeviceToken, background: Int) -> [AcceptedPush] {
        var pushes: [AcceptedPush] = []
        for index in 0..<background {
            var push = DeviceGatewayTests.push
            push.apnsID = "bg-\(index)"
            push.deviceToken = token
            pushes.append(push)
            if index == 0 {
                var alert = push
                alert.apnsID = "alert"
                alert.isBackground = false
                alert.pushType = .alert
                pushes.append(alert)
            }
        }
        return pushes
    }

    @Test("a batch waits the APNs latency once on the hub's clock; its alert goes to the user, not the device")
    func batchWaitsOnce() async {
        let clock = ManualClock()
        let alerts = Sink()
        let hub = DeviceHub(latency: .seconds(1), clock: clock) { push, note in
            if note == .alert { alerts.add(push.apnsID) }
        }
        let sink = Sink()
        let token = DeviceToken(hex: "cd34")!
        _ = await hub.connect(token: token, environment: .sandbox) { sink.add("\($0.apnsID) at \(clock.now.offset)") }
        let done = Mutex(false)
        // Once the batch is delivered, a sleeper of its own tells the loop below that it is.
        let delivery = Task {
            await hub.deliver(batch: Self.batch(to: token, background: 3))
            done.withLock { $0 = true }
            try? await clock.sleep(for: .seconds(1000))
        }
        // The clock moves a latency at a time for as long as the batch still waits on it.
        await clock.waitForSleepers(1)
        #expect(sink.ids.isEmpty)
        while true {
            clock.advance(by: .seconds(1))
            await clock.waitForSleepers(1)
            if done.withLock({ $0 }) { break }
        }
        delivery.cancel()
        // A latency waited per push would have delivered them at 1, 2 and 3 seconds.
        #expect(sink.ids == ["bg-0 at 1.0 seconds", "bg-1 at 1.0 seconds", "bg-2 at 1.0 seconds"])
        #expect(alerts.ids == ["alert"])
    }

    @Test("a handler without a batch form gets each push of a batch through deliver(_:)")
    func defaultBatch() async {
        let sink = Sink()
        let handler = ClosureDeliveryHandler { sink.add($0.apnsID) }
        let queue = DeliveryQueue(handler: handler)
        for index in 0..<20 {
            var push = DeviceGatewayTests.push
            push.apnsID = "p\(index)"
            queue.enqueue(.push(push))
        }
        await sink.wait(count: 20)
        #expect(Set(sink.ids) == Set((0..<20).map { "p\($0)" }) && sink.ids.count == 20)
    }
}
