@testable import CurlXHR
import Foundation

/// A ``TransferRunner`` with no libcurl and no network: it records what a request asks of it
/// (start, cancel, resume, close), and the test plays the engine's part, event by event, with
/// ``head(_:status:fields:)``, ``body(_:_:)`` and ``finish(_:failure:)``, as the engine thread
/// would call the transfer's owner. `onStart` may answer a send at once (on the sending
/// thread, before a synchronous send waits). A stopped send (cancel, close) is completed at
/// once, or, with `completesStopsAtOnce` false, when the test calls ``completeStopped(_:)``:
/// as the engine may, the test can first deliver news the transfer had on its way.
final class ScriptedRunner: TransferRunner, @unchecked Sendable {
    enum Command: Equatable, CustomStringConvertible {
        case start(send: Int)
        case cancel(send: Int)
        case resume
        case close(send: Int?)

        var description: String {
            switch self {
            case .start(let send): "start \(send)"
            case .cancel(let send): "cancel \(send)"
            case .resume: "resume"
            case .close(let send): "close \(send.map(String.init) ?? "-")"
            }
        }
    }

    private let state = Locked([Command]())
    /// The transfer of the last start, held weakly: a request reuses its finished transfer
    /// only when nothing else refers to it.
    private weak var lastTransfer: Transfer?
    /// Answers a started send, on the thread that started it.
    let onStart: (@Sendable (ScriptedRunner, Transfer) -> Void)?
    let resumed = DispatchSemaphore(value: 0)
    let completesStopsAtOnce: Bool

    init(completesStopsAtOnce: Bool = true, onStart: (@Sendable (ScriptedRunner, Transfer) -> Void)? = nil) {
        self.completesStopsAtOnce = completesStopsAtOnce
        self.onStart = onStart
    }

    var commands: [Command] { state.withLock { $0 } }
    /// The transfer of the last start.
    var transfer: Transfer? { state.withLock { _ in lastTransfer } }

    func start(_ transfer: Transfer) {
        state.withLock {
            $0.append(.start(send: transfer.sends))
            lastTransfer = transfer
        }
        onStart?(self, transfer)
    }

    func cancel(_ transfer: Transfer, send: Int) {
        state.withLock { $0.append(.cancel(send: send)) }
        if completesStopsAtOnce { complete(transfer, send: send) }
    }

    func resume(_ transfer: Transfer) {
        state.withLock { $0.append(.resume) }
        resumed.signal()
    }

    func close(_ transfer: (Transfer, send: Int)?, connections: [ConnectionID]) {
        state.withLock { $0.append(.close(send: transfer?.send)) }
        if completesStopsAtOnce, let (transfer, send) = transfer { complete(transfer, send: send) }
    }

    // MARK: Playing the engine

    /// The final response's head, into the transfer's body path as the engine hands it.
    func head(_ transfer: Transfer, status: Int = 200, fields: String = "") {
        let lines = Array(fields.utf8)
        lines.withUnsafeBufferPointer { lines in
            transfer.deliverHead(RecordedHead(status: status, reason: ReasonPhrase.standard(for: status), lines: lines))
        }
    }

    /// Body bytes, as libcurl's write callback hands them.
    @discardableResult
    func body(_ transfer: Transfer, _ text: String) -> BodyDisposition {
        Array(text.utf8).withUnsafeBytes { bytes in transfer.deliverBody(bytes) }
    }

    @discardableResult
    func body(_ transfer: Transfer, count: Int) -> BodyDisposition {
        [UInt8](repeating: UInt8(ascii: "x"), count: count).withUnsafeBytes { bytes in
            transfer.deliverBody(bytes)
        }
    }

    /// The end of the send, as the engine reports it, and its completion.
    func finish(_ transfer: Transfer, failure: TransferFailure? = nil) {
        transfer.finish(failure)
        complete(transfer, send: transfer.sends)
    }

    /// Completes a stopped send (``completesStopsAtOnce`` false): the engine's last touch.
    func completeStopped(_ transfer: Transfer) {
        complete(transfer, send: transfer.sends)
    }

    /// Completes the send once (the engine's last touch), waking a synchronous send; a send
    /// completed already, or followed by another, is left alone.
    private func complete(_ transfer: Transfer, send: Int) {
        guard send == transfer.sends, !transfer.isComplete.load(ordering: .acquiring) else { return }
        Wakeups.wake(transfer.complete())
    }
}
