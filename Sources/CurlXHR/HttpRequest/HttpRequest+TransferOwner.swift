/// What the engine tells a request of its transfer: the head, body bytes, the end.
extension HttpRequest: TransferOwner {
    func transferReceivedHead(_ transfer: Transfer, _ head: RecordedHead) {
        let effects = withCore { core -> Effects in
            guard core.transfer === transfer else { return Effects() }
            core.keepResponse(head)
            core.responseFromCache = transfer.answersFromCache
            return core.apply(core.machine.headersReceived())
        }
        perform(effects)
    }

    func transferReceivedBody(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        let outcome = withCore { core -> (BodyDisposition, Effects) in
            guard core.transfer === transfer else { return (.refused, Effects()) }
            // Backpressure: while a LOADING callback is pending or running and has not drained
            // the buffer, stop reading rather than buffer without bound. The end of that
            // callback resumes the transfer, so a consumer that only reads at DONE still
            // gets there.
            if core.message.isAsync, core.scheduler.pauses(unread: core.sink.unreadCount) {
                return (.paused, Effects())
            }
            core.sink.write(bytes, announcedLength: core.response?.announcedLength)
            return (.accepted, core.bodyAccepted(bytes.count))
        }
        perform(outcome.1)
        return outcome.0
    }

    func transferWroteBody(_ transfer: Transfer, count: Int) -> BodyDisposition {
        let outcome = withCore { core -> (BodyDisposition, Effects) in
            guard core.transfer === transfer else { return (.refused, Effects()) }
            return (.accepted, core.bodyAccepted(count))
        }
        perform(outcome.1)
        return outcome.0
    }

    func transferReadsBody(_ transfer: Transfer, reading read: (UnsafeMutableRawBufferPointer) -> Int) -> (BodyDisposition, Int)? {
        let outcome = withCore { core -> ((BodyDisposition, Int)?, Effects) in
            guard core.transfer === transfer else { return ((.refused, 0), Effects()) }
            guard core.sink.unreadCount == 0 else { return (nil, Effects()) }
            if core.message.isAsync, core.scheduler.pauses(unread: 0) { return ((.paused, 0), Effects()) }
            guard let buffer = BodyBuffers.take() else { return (nil, Effects()) }
            let count = read(UnsafeMutableRawBufferPointer(start: buffer, count: BodyBuffers.size))
            guard count > 0 else {
                BodyBuffers.giveBack(buffer)
                return ((.accepted, count), Effects())
            }
            core.sink.adopt(BodyBuffers.data(buffer, count: count))
            return ((.accepted, count), core.bodyAccepted(count))
        }
        perform(outcome.1)
        return outcome.0
    }

    func transferSent(_ transfer: Transfer, bytes: Int64, of total: Int64) {
        let moved = sentBytes.exchange(bytes, ordering: .relaxed) != bytes
        if total > 0 { bytesToSend.store(total, ordering: .relaxed) }
        guard moved, hasProgressReceiver.load(ordering: .relaxed) else { return }
        let effects = withCore { core -> Effects in
            var effects = Effects()
            if core.transfer === transfer { core.reportProgress(effects: &effects) }
            return effects
        }
        perform(effects)
    }

    func transferFinished(_ transfer: Transfer, failure: TransferFailure?, fallbackStatus: Int = 0,
                          record: SendRecord = SendRecord()) {
        let effects = withCore { core -> Effects in
            guard core.transfer === transfer else { return Effects() }
            core.forgetTransfer()
            core.observer = nil  // closed by the transfer, with the record
            core.lastSend = record
            core.usedConnections.removeAll(keepingCapacity: true)
            transfer.forEachConnectionUsed { core.usedConnections.append($0) }
            core.scheduler.transferEnded()
            // The last progress report, with the final counts, goes just before DONE.
            var progress = Effects()
            core.reportProgress(final: true, effects: &progress)
            var effects: Effects
            if let failure {
                core.forgetResponse()
                core.failure = failure
                effects = core.apply(core.machine.failed())
            } else {
                if core.response == nil {
                    core.response = ResponseHead(status: fallbackStatus, reason: ReasonPhrase.standard(for: fallbackStatus))
                }
                effects = core.apply(core.machine.finished())
            }
            if progress.deliverOn != nil { effects.deliverOn = progress.deliverOn }
            return effects
        }
        perform(effects)
    }
}
