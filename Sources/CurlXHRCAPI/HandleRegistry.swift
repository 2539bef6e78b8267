import CurlXHR

/// Numbers every C handle of the process, whatever its kind: a handle of one kind never
/// finds an object of another.
private let handleNumbers = Locked(UInt(1))

/// The objects behind C handles (`cxhr_request *`, `cxhr_queue *`). A handle is a counter
/// shifted left, never reused: a stale or destroyed one, or one of another kind, finds
/// nothing, and the call that got it says false instead of touching freed memory.
final class HandleRegistry<Object: AnyObject>: @unchecked Sendable {
    private let table = Locked([UInt: Object]())

    private static func key(_ handle: OpaquePointer?) -> UInt? {
        handle.map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0))) >> 4 }
    }

    /// Makes an object for a new handle and keeps it until ``unregister(_:)``.
    func register(_ make: (OpaquePointer) -> Object) -> Object {
        let key = handleNumbers.withLock { number in
            defer { number += 1 }
            return number
        }
        let object = make(OpaquePointer(bitPattern: key << 4)!)
        table.withLock { $0[key] = object }
        return object
    }

    func find(_ handle: OpaquePointer?) -> Object? {
        guard let key = Self.key(handle) else { return nil }
        return table.withLock { $0[key] }
    }

    func unregister(_ handle: OpaquePointer?) -> Object? {
        guard let key = Self.key(handle) else { return nil }
        return table.withLock { $0.removeValue(forKey: key) }
    }
}
