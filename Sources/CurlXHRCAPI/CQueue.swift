import CurlXHRHeader
import CurlXHR

/// The queues behind `cxhr_queue *` handles.
enum CQueue {
    static let registry = HandleRegistry<RequestQueue>()
}

@c @implementation
public func cxhr_queue_create(_ maxSimultaneous: Int32, _ maxPending: Int32) -> OpaquePointer? {
    guard maxSimultaneous >= 1, maxPending >= 0 else { return nil }
    var handle: OpaquePointer?
    _ = CQueue.registry.register { made in
        handle = made
        return RequestQueue(maxSimultaneous: Int(maxSimultaneous), maxPending: Int(maxPending))
    }
    return handle
}

@c @implementation
public func cxhr_queue_destroy(_ handle: OpaquePointer?) {
    CQueue.registry.unregister(handle)?.close()
}

@c @implementation
public func cxhr_queue_abort_waiting(_ queueHandle: OpaquePointer?) {
    CQueue.registry.find(queueHandle)?.abortWaiting()
}

@c @implementation
public func cxhr_queue_enqueue(_ queueHandle: OpaquePointer?, _ handle: OpaquePointer?, _ atFront: Bool) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let queue = CQueue.registry.find(queueHandle) else {
        return request.refuse(queueHandle == nil ? "the queue is NULL" : "the queue was destroyed")
    }
    return request.call { queue.enqueue($0, atFront: atFront) }
}

@c @implementation
public func cxhr_queue_get_counts(_ queueHandle: OpaquePointer?, _ running: UnsafeMutablePointer<Int32>?,
                                  _ waiting: UnsafeMutablePointer<Int32>?) -> Bool {
    guard let queue = CQueue.registry.find(queueHandle) else { return false }
    running?.pointee = Int32(clamping: queue.runningCount)
    waiting?.pointee = Int32(clamping: queue.waitingCount)
    return true
}

@c @implementation
public func cxhr_set_queue(_ handle: OpaquePointer?, _ queueHandle: OpaquePointer?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    var queue: RequestQueue?
    if queueHandle != nil {
        guard let found = CQueue.registry.find(queueHandle) else { return request.refuse("the queue was destroyed") }
        queue = found
    }
    request.request.queue = queue
    request.succeed()
    return true
}

@c @implementation
public func cxhr_set_priority(_ handle: OpaquePointer?, _ priority: cxhr_priority) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let value = HttpRequest.Priority(rawValue: Int32(bitPattern: priority.rawValue)) else {
        return request.refuse("\(priority.rawValue) is not a cxhr_priority")
    }
    request.request.priority = value
    request.succeed()
    return true
}

@c @implementation
public func cxhr_set_connection_limits(_ total: Int32, _ perHost: Int32) -> Bool {
    HttpRequest.setConnectionLimits(total: Int(total), perHost: Int(perHost))
}
