import Testing
@testable import CurlXHR

/// The GDHttpRequest ready-state table, checked pair by pair without I/O.
@Suite struct RequestStateMachineTests {
    typealias Machine = RequestStateMachine
    typealias State = HttpRequest.State

    /// A machine brought to `state` through the real calls and events.
    static func machine(in state: State) -> Machine {
        var machine = Machine()
        switch state {
        case .unsent:
            break
        case .opened:
            _ = machine.open()
        case .sent:
            _ = machine.open(); _ = machine.send()
        case .headersReceived:
            _ = machine.open(); _ = machine.send(); _ = machine.headersReceived()
        case .loading:
            _ = machine.open(); _ = machine.send(); _ = machine.headersReceived(); _ = machine.bodyReceived()
        case .done:
            _ = machine.open(); _ = machine.send(); _ = machine.headersReceived(); _ = machine.finished()
        }
        #expect(machine.state == state)
        return machine
    }

    static let all: [State] = [.unsent, .opened, .sent, .headersReceived, .loading, .done]
    static let inFlight: Set<State> = [.sent, .headersReceived, .loading]

    @Test(arguments: all)
    func openAlwaysEndsOpenedAbortingWhatIsInFlight(state: State) {
        var machine = Self.machine(in: state)
        let action = machine.open()
        #expect(action == (Self.inFlight.contains(state) ? .abortThenOpen : state == .opened ? .reopen : .open))
        #expect(machine.state == .opened)
    }

    @Test(arguments: all)
    func messageCallsOnlyInOpened(state: State) {
        let machine = Self.machine(in: state)
        for call in [Machine.Call.setRequestHeader, .setPostValue] {
            let expected: Machine.ConfigureAction = state == .opened
                ? .apply : .reject(.init(call: call, state: state))
            #expect(machine.configureMessage(call) == expected)
        }
    }

    @Test(arguments: all)
    func preSendSwitchesInUnsentOpenedAndDone(state: State) {
        let machine = Self.machine(in: state)
        let expected: Machine.ConfigureAction = Self.inFlight.contains(state)
            ? .reject(.init(call: .preSendSwitch, state: state)) : .apply
        #expect(machine.configureSwitch() == expected)
    }

    @Test(arguments: all)
    func sendOnlyInOpened(state: State) {
        var machine = Self.machine(in: state)
        let action = machine.send()
        if state == .opened {
            #expect(action == .start)
            #expect(machine.state == .sent)
        } else {
            #expect(action == .reject(.init(call: .send, state: state)))
            #expect(machine.state == state)
        }
    }

    @Test(arguments: all)
    func abortOnlyInFlightAndThenDone(state: State) {
        var machine = Self.machine(in: state)
        let action = machine.abort()
        if Self.inFlight.contains(state) {
            #expect(action == .cancelTransfer)
            #expect(machine.state == .done)
        } else {
            #expect(action == .reject(.init(call: .abort, state: state)))
            #expect(machine.state == state, "abort changes nothing outside SENT, HEADERS_RECEIVED, LOADING")
        }
    }

    @Test(arguments: all)
    func closeAbortsInFlightAndIsAllowedEverywhere(state: State) {
        var machine = Self.machine(in: state)
        let action = machine.close()
        if Self.inFlight.contains(state) {
            #expect(action == .cancelTransferThenDropConnections)
            #expect(machine.state == .done)
        } else {
            #expect(action == .dropConnections)
            #expect(machine.state == state)
        }
    }

    @Test(arguments: all)
    func engineEventsOutsideTheirStatesAreIgnored(state: State) {
        var machine = Self.machine(in: state)
        if state != .sent {
            #expect(machine.headersReceived() == .ignore)
            #expect(machine.state == state)
        }
        if !Self.inFlight.contains(state) {
            #expect(machine.bodyReceived() == .ignore)
            #expect(machine.finished() == .ignore)
            #expect(machine.failed() == .ignore)
            #expect(machine.state == state)
        }
    }

    @Test func aTypicalDownloadReadsLikeATranscript() {
        var machine = Machine()
        #expect(machine.open() == .open)
        #expect(machine.send() == .start)
        #expect(machine.headersReceived() == .report(.headersReceived))
        #expect(machine.bodyReceived() == .report(.loading))
        #expect(machine.bodyReceived() == .report(.loading), "LOADING is reported again per chunk")
        #expect(machine.finished() == .report(.done))
        #expect(machine.state == .done)
    }

    @Test func bodyOrEndWithoutHeadersReportsHeadersFirst() {
        var machine = Self.machine(in: .sent)
        #expect(machine.bodyReceived() == .reportHeadersThen(.loading))
        var other = Self.machine(in: .sent)
        #expect(other.finished() == .reportHeadersThen(.done))
    }

    @Test(arguments: [State.sent, .headersReceived, .loading])
    func failureEndsInDone(state: State) {
        var machine = Self.machine(in: state)
        #expect(machine.failed() == .report(.done))
        #expect(machine.state == .done)
        #expect(machine.failed() == .ignore)
    }

    @Test func abortedTransferEventsAreIgnoredAndReopenWorks() {
        var machine = Self.machine(in: .loading)
        #expect(machine.abort() == .cancelTransfer)
        #expect(machine.bodyReceived() == .ignore)
        #expect(machine.finished() == .ignore)
        #expect(machine.open() == .open)
        #expect(machine.send() == .start)
    }

    @Test func reportQueueKeepsOrderWhileFilledAndEmptiedInTurns() {
        var queue = ReportQueue()
        func taken() -> [ReportQueue.Report] {
            let batch = queue.take()
            return (0..<batch.count).map { (batch[$0], batch.generation) }
        }
        #expect(queue.isEmpty && taken().isEmpty)
        queue.append(.opened, generation: 1)
        queue.append(.sent, generation: 1)
        #expect(taken().elementsEqual([(.opened, 1), (.sent, 1)], by: ==))
        queue.append(.headersReceived, generation: 1)
        queue.append(.loading, generation: 1)
        queue.append(.done, generation: 1)
        queue.append(.opened, generation: 2)
        // A batch holds the reports of one open.
        #expect(taken().elementsEqual([(.headersReceived, 1), (.loading, 1), (.done, 1)], by: ==))
        queue.append(.sent, generation: 2)  // while one is still waiting
        #expect(taken().elementsEqual([(.opened, 2), (.sent, 2)], by: ==))
        #expect(queue.isEmpty)
        // More than a batch holds: the rest waits, in order, while new ones join it.
        for state in [State.opened, .sent, .headersReceived, .loading, .loading, .loading, .loading, .loading, .loading] {
            queue.append(state, generation: 3)
        }
        #expect(taken().elementsEqual([(.opened, 3), (.sent, 3), (.headersReceived, 3)] + Array(repeating: (.loading, 3), count: 5), by: ==))
        queue.append(.done, generation: 3)
        #expect(queue.take(upTo: 1).count == 1)
        #expect(taken().elementsEqual([(.done, 3)], by: ==))
        #expect(queue.discards == 0)
        for state in [State.opened, .sent, .headersReceived] { queue.append(state, generation: 4) }  // reuses the slots
        #expect(queue.take(upTo: 1).count == 1)  // OPENED of open 4 is being delivered
        // An abort of open 4 drops its waiting reports, and makes the one taken stale.
        queue.discard(generation: 4)
        #expect(queue.isEmpty && queue.discards == 1)
        queue.append(.done, generation: 4)
        for state in [State.opened, .sent] { queue.append(state, generation: 5) }
        // An abort of open 5 drops only its own reports: open 4's DONE stays, and nothing
        // taken (of open 4) is stale.
        queue.discard(generation: 5)
        #expect(queue.discards == 1)
        queue.append(.done, generation: 5)
        #expect(taken().elementsEqual([(.done, 4)], by: ==))
        #expect(taken().elementsEqual([(.done, 5)], by: ==))
        #expect(taken().isEmpty && queue.discards == 1)
    }
}
