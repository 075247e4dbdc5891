@testable import AuthBackend
import Testing

/// The fleet's group commit (``GroupCommit``) as a value: each interleaving that matters, step by
/// step, and every interleaving of a few changes, held to the rules: one leader at a time, every
/// change answered once, in arrival order, nothing left waiting.
@Suite("The fleet's group commit, as a state machine")
struct GroupCommitTests {
    @Test("the first change leads; changes arriving while it leads or runs wait; a batch takes every change waiting at its start")
    func leaderAndBatch() throws {
        var commit = GroupCommit()
        let (first, arrival) = commit.arrive()
        #expect(arrival == .lead)
        let (second, secondArrival) = commit.arrive()
        #expect(secondArrival == .wait)
        #expect(try commit.startBatch(by: first) == [first, second])
        let (third, thirdArrival) = commit.arrive()
        #expect(thirdArrival == .wait)
        #expect(commit.state == .running(leader: first, batch: [first, second], waiting: [third]))
    }

    @Test("a batch's end answers its changes; the first that arrived during it leads the next; with none waiting the machine is idle and the next arrival leads")
    func handOver() throws {
        var commit = GroupCommit()
        let (first, _) = commit.arrive()
        _ = try commit.startBatch(by: first)
        let (second, _) = commit.arrive()
        let (third, _) = commit.arrive()
        #expect(try commit.endBatch(by: first) == .init(answer: [first], nextLeader: second))
        // Arriving between the hand-over and the new leader's start: in the same batch.
        let (fourth, arrival) = commit.arrive()
        #expect(arrival == .wait)
        #expect(try commit.startBatch(by: second) == [second, third, fourth])
        #expect(try commit.endBatch(by: second) == .init(answer: [second, third, fourth], nextLeader: nil))
        #expect(commit.state == .idle)
        #expect(commit.arrive().1 == .lead)
    }

    @Test("a step out of turn is refused with what happened: a waiting change starting a batch, a batch ended twice, an end before a start")
    func outOfTurn() throws {
        var commit = GroupCommit()
        let (first, _) = commit.arrive()
        let (second, _) = commit.arrive()
        #expect(throws: GroupCommit.Misstep.self) { _ = try commit.startBatch(by: second) }
        #expect(throws: GroupCommit.Misstep.self) { _ = try commit.endBatch(by: first) }
        _ = try commit.startBatch(by: first)
        _ = try commit.endBatch(by: first)
        #expect(throws: GroupCommit.Misstep.self) { _ = try commit.endBatch(by: first) }
        #expect(commit.state == .idle, "a refused step changes nothing (the batch took both)")
        #expect(throws: GroupCommit.Misstep.self) { _ = try commit.startBatch(by: second) }
    }

    /// Every interleaving of arrivals, starts and ends for up to six changes. A batch that fails
    /// (the store refused, or went away mid-batch) ends as a kept one does: its changes all get
    /// the store's error and the next leader goes on (BackendStoreTests' "the database lost
    /// mid-run" holds that on PostgreSQL).
    @Test("every interleaving of six changes: one leader at a time, each change answered once and in arrival order, none left waiting")
    func everyInterleaving() throws {
        var explored = 0
        func explore(_ commit: GroupCommit, arrived: Int, answered: [GroupCommit.ChangeID]) throws {
            // The moves possible from here: a new change arrives, or the leader starts or ends a batch.
            var moved = false
            if arrived < 6 {
                var next = commit
                let (id, arrival) = next.arrive()
                if arrival == .lead { #expect(commit.state == .idle, "change \(id) leads beside another leader") }
                try explore(next, arrived: arrived + 1, answered: answered)
                moved = true
            }
            switch commit.state {
            case .idle:
                break
            case .leading(let leader, let waiting):
                #expect(waiting.first == leader, "the leader is the first waiting change")
                var next = commit
                let batch = try next.startBatch(by: leader)
                #expect(batch == waiting)
                try explore(next, arrived: arrived, answered: answered)
                moved = true
            case .running(let leader, let batch, _):
                var next = commit
                let end = try next.endBatch(by: leader)
                #expect(end.answer == batch)
                try explore(next, arrived: arrived, answered: answered + end.answer)
                moved = true
            }
            if !moved {
                // Nothing more can happen: every change that arrived was answered, once, in order.
                explored += 1
                #expect(commit.state == .idle)
                #expect(answered == Array(1...GroupCommit.ChangeID(arrived)), "answered \(answered)")
            }
        }
        try explore(GroupCommit(), arrived: 0, answered: [])
        #expect(explored == 396, "\(explored) interleavings")
    }
}
