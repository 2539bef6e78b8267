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
/// | send                | false  | SENT   | false | false | false | false |
/// | abort               | false  | false  | DONE | DONE | DONE | false |
/// | close               | yes    | yes    | abort | abort | abort | yes |
/// | headers (engine)    | –      | –      | HEADERS_RECEIVED | – | – | – |
/// | body (engine)       | –      | –      | HEADERS_RECEIVED, LOADING | LOADING | LOADING | – |
/// | finished (engine)   | –      | –      | HEADERS_RECEIVED, DONE | DONE | DONE | – |
/// | failed (engine)     | –      | –      | DONE | DONE | DONE | – |
///
/// Engine events outside their states (for instance after an abort) are ignored.
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
    }

    enum OpenAction: Equatable {
        /// Move to OPENED (and report it).
        case open
        /// Already OPENED: stay, with nothing to report (the XHR rule: no second OPENED).
        case reopen
        /// Stop the transfer in flight (the state passes through DONE), then move to OPENED.
        case abortThenOpen
    }

    enum ConfigureAction: Equatable {
        case apply
        case reject(Rejection)
    }

    enum SendAction: Equatable {
        /// Now SENT: hand the transfer to the engine.
        case start
        case reject(Rejection)
    }

    enum AbortAction: Equatable {
        /// Now DONE: stop the transfer and report DONE.
        case cancelTransfer
        case reject(Rejection)
    }

    enum CloseAction: Equatable {
        /// Forget the connections used so far.
        case dropConnections
        /// Stop the transfer in flight (now DONE), then forget the connections.
        case cancelTransferThenDropConnections
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

    var isInFlight: Bool {
        switch state {
        case .sent, .headersReceived, .loading: true
        case .unsent, .opened, .done: false
        }
    }

    // MARK: Calls

    mutating func open() -> OpenAction {
        let action: OpenAction = isInFlight ? .abortThenOpen : state == .opened ? .reopen : .open
        state = .opened
        return action
    }

    /// setRequestHeader, setPostValue and clearPostValues: OPENED only.
    func configureMessage(_ call: Call = .setRequestHeader) -> ConfigureAction {
        state == .opened ? .apply : .reject(Rejection(call: call, state: state))
    }

    /// The switches that apply to the next send: UNSENT, OPENED and DONE.
    func configureSwitch() -> ConfigureAction {
        isInFlight ? .reject(Rejection(call: .preSendSwitch, state: state)) : .apply
    }

    mutating func send() -> SendAction {
        guard state == .opened else { return .reject(Rejection(call: .send, state: state)) }
        state = .sent
        return .start
    }

    mutating func abort() -> AbortAction {
        guard isInFlight else { return .reject(Rejection(call: .abort, state: state)) }
        state = .done
        return .cancelTransfer
    }

    mutating func close() -> CloseAction {
        guard isInFlight else { return .dropConnections }
        state = .done
        return .cancelTransferThenDropConnections
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
