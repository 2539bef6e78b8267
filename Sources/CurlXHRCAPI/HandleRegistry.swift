import CurlXHR

/// The objects behind C handles (`cxhr_request *`, `cxhr_queue *`). A handle is a counter
/// shifted left, never reused: a stale or destroyed one finds nothing, and the call that got
/// it says false instead of touching freed memory.
final class HandleRegistry<Object: AnyObject>: @unchecked Sendable {
    private let table = Locked((next: UInt(1), live: [UInt: Object]()))

    private static func key(_ handle: OpaquePointer?) -> UInt? {
        handle.map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0))) >> 4 }
    }

    /// Makes an object for a new handle and keeps it until ``unregister(_:)``.
    func register(_ make: (OpaquePointer) -> Object) -> Object {
        table.withLock { table in
            let key = table.next
            table.next += 1
            let object = make(OpaquePointer(bitPattern: key << 4)!)
            table.live[key] = object
            return object
        }
    }

    func find(_ handle: OpaquePointer?) -> Object? {
        guard let key = Self.key(handle) else { return nil }
        return table.withLock { $0.live[key] }
    }

    func unregister(_ handle: OpaquePointer?) -> Object? {
        guard let key = Self.key(handle) else { return nil }
        return table.withLock { $0.live.removeValue(forKey: key) }
    }
}
