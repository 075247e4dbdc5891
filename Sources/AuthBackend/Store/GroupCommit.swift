/// The fleet's group commit as a value: changes arrive, batches start and end, and each action
/// answers with what to do next (who leads, which changes a batch takes, whom to answer, who leads
/// after). It holds IDs only, no closures or continuations: the actor keeps each change's body and
/// how its caller is woken, keyed by ID (``IdentityToolkit/sharedChange(_:)``). AsyncHTTPClient's
/// `+StateMachine` files are the model.
///
/// One batch runs at a time, run by a change that waits for it rather than by a task of its own:
/// the first change to arrive when none leads is the leader; it starts a batch of every change
/// waiting (itself first), and when the batch ends (kept, or failed: all its changes get the same
/// answer) the first change that arrived meanwhile leads the next. Nothing runs beside the
/// backend, and nothing is left running once no change waits.
struct GroupCommit: Sendable {
    typealias ChangeID = UInt64

    enum State: Equatable, Sendable {
        /// No change waits, none leads.
        case idle
        /// `leader` is to start the next batch, of `waiting` (it among them).
        case leading(leader: ChangeID, waiting: [ChangeID])
        /// `batch` is being run by `leader`; `waiting` arrived since, for the next.
        case running(leader: ChangeID, batch: [ChangeID], waiting: [ChangeID])
    }

    /// What an arriving change does.
    enum Arrival: Equatable, Sendable {
        /// Lead: start the next batch now.
        case lead
        /// Wait to be answered, or told to lead.
        case wait
    }

    /// What follows a batch's end: the changes to answer (the batch's, in arrival order), and the
    /// change to wake to lead the next batch (nil: none waits; the machine is idle).
    struct BatchEnd: Equatable, Sendable {
        let answer: [ChangeID]
        let nextLeader: ChangeID?
    }

    /// A step the state does not allow: a programming error of the caller, named.
    struct Misstep: Error, Equatable {
        let message: String
    }

    private(set) var state = State.idle
    private var lastID: ChangeID = 0

    /// A change arrives: its ID, and whether it leads.
    mutating func arrive() -> (id: ChangeID, Arrival) {
        lastID += 1
        let id = lastID
        switch state {
        case .idle:
            state = .leading(leader: id, waiting: [id])
            return (id, .lead)
        case .leading(let leader, let waiting):
            state = .leading(leader: leader, waiting: waiting + [id])
        case .running(let leader, let batch, let waiting):
            state = .running(leader: leader, batch: batch, waiting: waiting + [id])
        }
        return (id, .wait)
    }

    /// `leader` starts its batch: every change waiting, in arrival order.
    mutating func startBatch(by leader: ChangeID) throws(Misstep) -> [ChangeID] {
        guard case .leading(let current, let waiting) = state, current == leader else {
            throw Misstep(message: "change \(leader) started a batch in state \(state)")
        }
        state = .running(leader: leader, batch: waiting, waiting: [])
        return waiting
    }

    /// The running batch ended, whatever its outcome: its changes are answered, and the first
    /// change that arrived during it leads the next.
    mutating func endBatch(by leader: ChangeID) throws(Misstep) -> BatchEnd {
        guard case .running(let current, let batch, let waiting) = state, current == leader else {
            throw Misstep(message: "change \(leader) ended a batch in state \(state)")
        }
        if let next = waiting.first {
            state = .leading(leader: next, waiting: waiting)
            return BatchEnd(answer: batch, nextLeader: next)
        }
        state = .idle
        return BatchEnd(answer: batch, nextLeader: nil)
    }
}
