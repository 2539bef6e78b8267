import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivering the reports of a request on its callback queue.
extension HttpRequest {
    /// Runs queued callbacks in order; hands the queue back after a run of them so one busy
    /// request does not hold a shared queue. The reports waiting are taken together under one
    /// lock and delivered without it, each only while no abort of their `open` discarded its
    /// reports since they were taken (then they are stale, and its DONE is taken next), and to
    /// the delegate and closure set last.
    func deliverReports() {
        var delivered = 0
        /// The generation of a LOADING (and of a progress) callback that returned since the
        /// last locked step.
        var endedLoading: Int?
        var endedProgress: Int?
        var receivers: ReportReceivers?
        // Kept apart, so that calling it takes no reference each time.
        var closure: (@Sendable (HttpRequest) -> Void)?
        var progress: (@Sendable (HttpRequest) -> Void)?
        /// ``receiverChanges`` when `receivers` were taken; nil before.
        var receiversTaken: UInt?
        func use(_ taken: (receivers: ReportReceivers, changes: UInt)) {
            receivers = taken.receivers
            closure = taken.receivers.closure
            progress = taken.receivers.progress
            receiversTaken = taken.changes
        }
        while true {
            let step = withCore { core -> DeliveryStep in
                var step = DeliveryStep()
                if let endedLoading { step.resume = core.loadingDelivered(generation: endedLoading) }
                if let endedProgress { core.scheduler.progressDelivered(generation: endedProgress) }
                if delivered >= Self.callbacksPerRun, core.scheduler.hasReports {
                    step.handBackTo = core.callbackQueue
                } else {
                    step.batch = core.scheduler.nextBatch(upTo: Self.callbacksPerRun - delivered)
                    step.discards = core.scheduler.discards
                    // Taken again only when a setter replaced them (a callback may).
                    let changes = receiverChanges.load(ordering: .relaxed)
                    if changes != receiversTaken { step.receivers = (core.receivers, changes) }
                }
                return step
            }
            endedLoading = nil
            endedProgress = nil
            if let paused = step.resume { engine.resume(paused) }
            if let queue = step.handBackTo {
                queue.async { self.deliverReports() }
                return
            }
            guard step.batch.count > 0 else { return }
            if let taken = step.receivers { use(taken) }
            for index in 0..<step.batch.count {
                guard published.reportDiscards == step.discards else { break }
                if receiverChanges.load(ordering: .acquiring) != receiversTaken {
                    // A callback of this batch replaced the delegate or the closure.
                    use(withCore { ($0.receivers, receiverChanges.load(ordering: .relaxed)) })
                }
                guard case .state(let state) = step.batch[index] else {
                    // Progress: getters answer for the request as it is (no state is reported).
                    progress?(self)
                    delivered += 1
                    endedProgress = step.batch.generation
                    continue
                }
                callbackState.store(state.rawValue, ordering: .relaxed)
                callbackGeneration.store(step.batch.generation, ordering: .relaxed)
                callbackThread.store(UInt(pthread_self()), ordering: .relaxed)
                receivers?.delegate?.onStatusChange(self)
                closure?(self)
                // Cleared before the next locked step: once that step ends the run, another
                // thread may start the next one and mark itself.
                callbackThread.store(0, ordering: .relaxed)
                delivered += 1
                if state == .loading { endedLoading = step.batch.generation }
            }
        }
    }

    /// Callbacks one run of ``deliverReports()`` makes at most before it hands the queue back.
    static let callbacksPerRun = 16

    /// What one locked step of ``deliverReports()`` found.
    private struct DeliveryStep {
        /// The transfer to resume now that the LOADING callback that paused it ended.
        var resume: Transfer?
        /// The reports to deliver next.
        var batch = ReportBatch()
        /// ``ReportScheduler/discards`` when the batch was taken.
        var discards: UInt64 = 0
        /// The receivers and ``HttpRequest/receiverChanges`` with them, when a setter replaced
        /// them since the run took them last.
        var receivers: (receivers: ReportReceivers, changes: UInt)?
        /// The run made its share of callbacks: the rest go in a new run on this queue.
        var handBackTo: DispatchQueue?
    }
}
