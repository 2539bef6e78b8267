#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Buffers a replayed body is read into, handed to the caller as the `Data` it takes, and
/// taken back for the next chunk once the caller lets go of that `Data`: a large body read
/// from the cache is one copy out of the page cache (as `cat` makes), with no buffer to fill
/// by copying, and no fresh memory to fault in for each chunk.
enum BodyBuffers {
    static let size = 1 << 20
    private static let kept = Locked([UnsafeMutableRawPointer]())
    private static let maxKept = 4

    /// A buffer of ``size`` bytes (nil when out of memory).
    static func take() -> UnsafeMutableRawPointer? {
        kept.withLock { $0.popLast() } ?? malloc(size)
    }

    /// Gives a buffer back: kept for the next `take`, or freed.
    static func giveBack(_ buffer: UnsafeMutableRawPointer) {
        let keep = kept.withLock { kept -> Bool in
            guard kept.count < maxKept else { return false }
            kept.append(buffer)
            return true
        }
        if !keep { free(buffer) }
    }

    /// `count` bytes of `buffer` as a `Data` that gives the buffer back when the last copy of
    /// it goes.
    static func data(_ buffer: UnsafeMutableRawPointer, count: Int) -> Data {
        Data(bytesNoCopy: buffer, count: count, deallocator: .custom { pointer, _ in giveBack(pointer) })
    }
}
