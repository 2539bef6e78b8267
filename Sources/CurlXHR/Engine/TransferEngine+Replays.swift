/// Transfers the cache answers: each round plays a part of each to its owner (head, then
/// body chunks), as libcurl would deliver a response; one whose owner paused waits for its
/// `resume` command. Engine thread only.
extension TransferEngine {
    /// The most body bytes a replay delivers in one round, so others (and libcurl's
    /// transfers) keep their turn.
    static let replayRoundBytes = 1 << 20

    /// Takes up a transfer the cache answers from the start.
    func beginReplay(_ transfer: Transfer) {
        _ = Unmanaged.passRetained(transfer)  // the engine's reference, released when it ends
        replays.append(transfer)
    }

    /// Plays each replay not waiting for its consumer one round's worth; ends those done.
    func playReplays() {
        var index = 0
        while index < replays.count {
            let transfer = replays[index]
            guard !transfer.progress.pausedByConsumer, let exchange = transfer.cache else {
                index += 1
                continue
            }
            switch exchange.replayStep(transfer, budget: Self.replayRoundBytes) {
            case .paused:
                transfer.progress.pausedByConsumer = true
                index += 1
            case .more:
                index += 1
            case .finished(let failure):
                replays.remove(at: index)
                finishReplay(transfer, failure: failure, report: true)
            }
        }
    }

    /// Ends `transfer` if it is a replay (an abort); whether it was one.
    func endReplay(_ transfer: Transfer) -> Bool {
        guard let index = replays.firstIndex(where: { $0 === transfer }) else { return false }
        replays.remove(at: index)
        finishReplay(transfer, failure: nil, report: false)
        return true
    }

    private func finishReplay(_ transfer: Transfer, failure: TransferFailure?, report: Bool) {
        transfer.isFinished = true
        transfer.cache?.replayEnded()
        if report {
            let record = transfer.cache?.record ?? SendRecord()
            transfer.finish(failure, record: record)
        }
        completedSendBits |= transfer.complete()
        Unmanaged.passUnretained(transfer).release()
    }
}
