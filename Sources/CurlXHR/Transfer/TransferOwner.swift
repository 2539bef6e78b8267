/// What a transfer tells the object it carries a send for: the final response's head, its
/// body bytes (or how many went to the response file), the body bytes sent, and the end.
/// The transfer's body path (`Transfer+BodyPath.swift`) decides which. They come one at a time for a transfer,
/// while it is in flight, from the engine thread (or, for a send the engine never had, such
/// as one whose Kerberos tickets could not be obtained, the end from the thread that knew).
///
/// ``HttpRequest`` is one owner, ``ResponseStream`` (an `async` response) the other: the seam
/// lets a transfer run for any front over the same engine, and lets tests drive an owner with
/// no server.
protocol TransferOwner: AnyObject, Sendable {
    /// The bit a synchronous send of this owner sleeps on (``Wakeups``).
    var completionBit: UInt32 { get }

    /// The final response's head (not a redirect hop's, nor an authentication round's, nor an
    /// interim 1xx one's). `head` borrows the parser's buffer: copy what is kept.
    func transferReceivedHead(_ transfer: Transfer, _ head: RecordedHead)

    /// Body bytes of the final response, in order; what became of them. Never bytes the
    /// response file took.
    func transferReceivedBody(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer) -> BodyDisposition

    /// `count` body bytes of the final response went to the response file; `.refused` when
    /// the send is no longer the owner's.
    func transferWroteBody(_ transfer: Transfer, count: Int) -> BodyDisposition

    /// Body bytes the owner reads itself, into a buffer of its own (``BodyBuffers``), when it
    /// holds none unread: `read` fills the buffer given and returns how many bytes it put there
    /// (0 at the end, negative on a failure). What became of them and that count; nil when the
    /// owner takes bytes only as ``transferReceivedBody(_:_:)`` hands them.
    func transferReadsBody(_ transfer: Transfer, reading read: (UnsafeMutableRawBufferPointer) -> Int) -> (BodyDisposition, Int)?

    /// How many body bytes have gone out so far, of `total` (libcurl's count of the body: -1
    /// or 0 when it has none or does not know).
    func transferSent(_ transfer: Transfer, bytes: Int64, of total: Int64)

    /// The transfer ended: `failure`, or the response (with `fallbackStatus` when no head was
    /// reported) and what the send measured.
    func transferFinished(_ transfer: Transfer, failure: TransferFailure?, fallbackStatus: Int, record: SendRecord)
}

/// What became of body bytes handed to a ``TransferOwner``.
enum BodyDisposition {
    case accepted
    /// Not taken: the consumer is behind; libcurl keeps them until the transfer is resumed.
    case paused
    /// The transfer is no longer the owner's (aborted): stop it.
    case refused
}

/// A transfer's reference to its owner: not counted (the owner keeps its finished transfer
/// for the next send, and a counted reference back would make a cycle), and called without
/// taking one: the transfer holds its owner while in flight, the only time it calls it. (A
/// call through an `unowned(unsafe)` existential retains and releases the owner every time:
/// a head and every body chunk.)
struct OwnerReference {
    private let object: Unmanaged<AnyObject>
    /// The owner's type, whose static entry points call it at +0 (``TransferOwner/withUnretained(_:_:)``).
    private let type: any TransferOwner.Type

    init(_ owner: any TransferOwner) {
        object = Unmanaged.passUnretained(owner as AnyObject)
        type = Swift.type(of: owner)
    }

    /// The owner as a counted reference, to keep it alive (``Transfer/ownerInFlight``).
    var counted: AnyObject { object.takeUnretainedValue() }

    /// Calls `body` with the owner, taking no reference to it.
    @inline(__always)
    func call<Result>(_ body: (any TransferOwner) -> Result) -> Result {
        type.withUnretained(object, body)
    }
}

extension TransferOwner {
    func transferReadsBody(_ transfer: Transfer, reading read: (UnsafeMutableRawBufferPointer) -> Int) -> (BodyDisposition, Int)? { nil }

    /// Runs `body` with the owner `object` points to, at +0 (``OwnerReference``).
    @inline(__always)
    static func withUnretained<Result>(_ object: Unmanaged<AnyObject>, _ body: (any TransferOwner) -> Result) -> Result {
        object._withUnsafeGuaranteedRef { body(unsafeDowncast($0, to: Self.self)) }
    }
}
