/// The GDHttpRequest ready-state table as a pure value type.
///
/// Calls from the user and events from the transfer engine go in; the new state and the
/// action to perform come out. There is no libcurl, no thread and no lock in here:
/// ``HttpRequest`` keeps one of these behind its lock, decides under the lock and acts
/// outside it.
///
/// | call / event        | UNSENT | OPENED | SENT | HEADERS_RECEIVED | LOADING | DONE |
/// |---------------------|--------|--------|------|------------------|---------|------|
/// | open                | OPENED | OPENED | abort, OPENED | abort, OPENED | abort, OPENED | OPENED |
/// | setRequestHeader, setPostValue | false | yes | false | false | false | false |
/// | pre-send switch     | yes    | yes    | false | false | false | yes |
/// | send                | false  | SENT (or waiting) | false | false | false | false |
/// | abort               | false  | false (waiting: DONE) | DONE | DONE | DONE | false |
/// | close               | yes    | yes (waiting: DONE) | abort | abort | abort | yes |
/// | slot free (queue)   | –      | waiting: SENT | – | – | – | – |
/// | headers (engine)    | –      | –      | HEADERS_RECEIVED | – | – | – |
/// | body (engine)       | –      | –      | HEADERS_RECEIVED, LOADING | LOADING | LOADING | – |
/// | finished (engine)   | –      | –      | HEADERS_RECEIVED, DONE | DONE | DONE | – |
/// | failed (engine)     | –      | –      | DONE | DONE | DONE | – |
///
/// A send into a ``RequestQueue`` with no free slot leaves the request OPENED but *waiting*:
/// until its slot comes (SENT) it refuses what SENT refuses, and `open`, `abort` and `close`
/// take it out of the queue as they stop a transfer. Engine events outside their states
/// (for instance after an abort) are ignored.
struct RequestStateMachine: Sendable, Equatable {
    typealias State = HttpRequest.State

    /// The user calls whose permission depends on the state.
    enum Call: String, CaseIterable, Sendable {
        case open
        case setRequestHeader
        case setPostValue
        case preSendSwitch
        case send
        case abort
        case close
    }

    /// Why a call was refused.
    struct Rejection: Equatable, Sendable {
        let call: Call
        let state: State
        /// OPENED, waiting for a slot of its queue.
        var waiting = false
    }

    enum OpenAction: Equatable {
        /// Move to OPENED (and report it).
        case open
        /// Already OPENED: stay, with nothing to report (the XHR rule: no second OPENED).
        case reopen
        /// Stop the transfer in flight (the state passes through DONE), then move to OPENED.
        case abortThenOpen
        /// Take the request out of its queue (the state passes through DONE), then OPENED.
        case leaveQueueThenOpen
    }

    enum ConfigureAction: Equatable {
        case apply
        case reject(Rejection)
    }

    enum SendAction: Equatable {
        /// Now SENT: hand the transfer to the engine.
        case start
        /// Still OPENED, waiting for a slot of the request's queue.
        case wait
        case reject(Rejection)
    }

    enum AbortAction: Equatable {
        /// Now DONE: stop the transfer and report DONE.
        case cancelTransfer
        /// Now DONE: take the request out of its queue (no transfer ran) and report DONE.
        case leaveQueue
        case reject(Rejection)
    }

    enum CloseAction: Equatable {
        /// Forget the connections used so far.
        case dropConnections
        /// Stop the transfer in flight (now DONE), then forget the connections.
        case cancelTransferThenDropConnections
        /// Take the request out of its queue (now DONE), then forget the connections.
        case leaveQueueThenDropConnections
    }

    enum SlotAction: Equatable {
        /// Now SENT: hand the transfer to the engine.
        case start
        /// Not waiting for this slot (aborted, opened again, or waiting for another since):
        /// nothing to start.
        case ignore
    }

    /// What an engine event changed.
    enum ReportAction: Equatable {
        /// Stale or meaningless in this state: change nothing.
        case ignore
        /// Report this state.
        case report(State)
        /// Report HEADERS_RECEIVED, then this state.
        case reportHeadersThen(State)
    }

    private(set) var state: State = .unsent
    /// OPENED, sent into a queue whose slots were all taken: the number of the slot it waits
    /// for. A slot with another number (given to an earlier send) starts nothing.
    private(set) var waitingSlot: Int?

    var isWaiting: Bool { waitingSlot != nil }

    var isInFlight: Bool {
        switch state {
        case .sent, .headersReceived, .loading: true
        case .unsent, .opened, .done: false
        }
    }

    // MARK: Calls

    mutating func open() -> OpenAction {
        let action: OpenAction = isWaiting ? .leaveQueueThenOpen
            : isInFlight ? .abortThenOpen : state == .opened ? .reopen : .open
        state = .opened
        waitingSlot = nil
        return action
    }

    /// setRequestHeader, setPostValue and clearPostValues: OPENED only, not while waiting.
    func configureMessage(_ call: Call = .setRequestHeader) -> ConfigureAction {
        state == .opened && !isWaiting ? .apply : .reject(rejection(call))
    }

    /// The switches that apply to the next send: UNSENT, OPENED and DONE, not while waiting.
    func configureSwitch() -> ConfigureAction {
        isInFlight || isWaiting ? .reject(rejection(.preSendSwitch)) : .apply
    }

    /// `waitingFor`: the request's queue has no free slot for it; the number of the one it
    /// will wait for.
    mutating func send(waitingFor slot: Int? = nil) -> SendAction {
        guard mayStart else { return .reject(rejection(.send)) }
        if let slot {
            waitingSlot = slot
            return .wait
        }
        state = .sent
        return .start
    }

    /// Whether ``send(waitingFor:)`` would be accepted.
    var mayStart: Bool { state == .opened && !isWaiting }

    mutating func abort() -> AbortAction {
        if isWaiting {
            waitingSlot = nil
            state = .done
            return .leaveQueue
        }
        guard isInFlight else { return .reject(rejection(.abort)) }
        state = .done
        return .cancelTransfer
    }

    mutating func close() -> CloseAction {
        if isWaiting {
            waitingSlot = nil
            state = .done
            return .leaveQueueThenDropConnections
        }
        guard isInFlight else { return .dropConnections }
        state = .done
        return .cancelTransferThenDropConnections
    }

    // MARK: Queue events

    /// The request's queue gave it the slot numbered `slot`.
    mutating func slotFreed(_ slot: Int) -> SlotAction {
        guard waitingSlot == slot else { return .ignore }
        waitingSlot = nil
        state = .sent
        return .start
    }

    func rejection(_ call: Call) -> Rejection {
        Rejection(call: call, state: state, waiting: isWaiting)
    }

    // MARK: Engine events

    /// The final response's headers are in.
    mutating func headersReceived() -> ReportAction {
        guard state == .sent else { return .ignore }
        state = .headersReceived
        return .report(.headersReceived)
    }

    /// Body bytes arrived.
    mutating func bodyReceived() -> ReportAction {
        switch state {
        case .sent:
            state = .loading
            return .reportHeadersThen(.loading)
        case .headersReceived, .loading:
            state = .loading
            return .report(.loading)
        case .unsent, .opened, .done:
            return .ignore
        }
    }

    /// The transfer completed with a response.
    mutating func finished() -> ReportAction {
        switch state {
        case .sent:
            state = .done
            return .reportHeadersThen(.done)
        case .headersReceived, .loading:
            state = .done
            return .report(.done)
        case .unsent, .opened, .done:
            return .ignore
        }
    }

    /// The transfer failed (DNS, connect, TLS, timeout, reset, malformed response).
    mutating func failed() -> ReportAction {
        guard isInFlight else { return .ignore }
        state = .done
        return .report(.done)
    }
}
