import Testing
@testable import CurlXHR

/// The GDHttpRequest ready-state table, checked pair by pair without I/O.
@Suite(.ownThreads) struct RequestStateMachineTests {
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
}

/// A request sent into a queue with no free slot: OPENED and waiting, until its slot comes
/// or it is stopped.
@Suite(.ownThreads) struct WaitingRequestStateMachineTests {
    typealias Machine = RequestStateMachine

    static func waiting() -> Machine {
        var machine = Machine()
        _ = machine.open()
        #expect(machine.send(waitingFor: 7) == .wait)
        #expect(machine.state == .opened && machine.waitingSlot == 7 && !machine.isInFlight)
        return machine
    }

    @Test func aWaitingRequestRefusesWhatASentOneRefuses() {
        var machine = Self.waiting()
        let waiting = Machine.Rejection(call: .send, state: .opened, waiting: true)
        #expect(!machine.mayStart)
        #expect(machine.send() == .reject(waiting))
        #expect(machine.send(waitingFor: 8) == .reject(waiting))
        #expect(machine.configureMessage(.setRequestHeader) == .reject(.init(call: .setRequestHeader, state: .opened, waiting: true)))
        #expect(machine.configureMessage(.setPostValue) == .reject(.init(call: .setPostValue, state: .opened, waiting: true)))
        #expect(machine.configureSwitch() == .reject(.init(call: .preSendSwitch, state: .opened, waiting: true)))
        #expect(HttpRequestError(waiting).message == "send is not allowed while the request waits in its queue")
        #expect(machine.state == .opened && machine.isWaiting)
    }

    @Test func itsSlotMakesItSentOnceAndThenTheUsualTableHolds() {
        var machine = Self.waiting()
        // Another slot (an earlier send's) starts nothing.
        #expect(machine.slotFreed(6) == .ignore)
        #expect(machine.state == .opened && machine.waitingSlot == 7)
        #expect(machine.slotFreed(7) == .start)
        #expect(machine.state == .sent && !machine.isWaiting)
        #expect(machine.slotFreed(7) == .ignore)
        #expect(machine.headersReceived() == .report(.headersReceived))
        #expect(machine.finished() == .report(.done))
    }

    @Test func engineEventsWhileWaitingAreIgnored() {
        var machine = Self.waiting()
        #expect(machine.headersReceived() == .ignore)
        #expect(machine.bodyReceived() == .ignore)
        #expect(machine.finished() == .ignore)
        #expect(machine.failed() == .ignore)
        #expect(machine.state == .opened && machine.isWaiting)
    }

    @Test func abortTakesItOutOfTheQueueIntoDone() {
        var machine = Self.waiting()
        #expect(machine.abort() == .leaveQueue)
        #expect(machine.state == .done && !machine.isWaiting)
        // Its slot comes too late: nothing starts.
        #expect(machine.slotFreed(7) == .ignore)
        #expect(machine.abort() == .reject(.init(call: .abort, state: .done)))
    }

    @Test func closeTakesItOutOfTheQueueIntoDone() {
        var machine = Self.waiting()
        #expect(machine.close() == .leaveQueueThenDropConnections)
        #expect(machine.state == .done && !machine.isWaiting)
        #expect(machine.slotFreed(7) == .ignore)
    }

    @Test func openTakesItOutOfTheQueueAndItMaySendAgain() {
        var machine = Self.waiting()
        #expect(machine.open() == .leaveQueueThenOpen)
        #expect(machine.state == .opened && !machine.isWaiting)
        #expect(machine.slotFreed(7) == .ignore)
        #expect(machine.configureMessage() == .apply)
        #expect(machine.send() == .start)
        #expect(machine.state == .sent)
    }
}
