#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Array {
    /// Empties the array and keeps its buffer for the next round of the loop that fills it.
    /// Popping from the end costs less than `removeAll(keepingCapacity:)` (a generic
    /// `replaceSubrange`) for the few elements such a round holds.
    mutating func removeAllKeepingBuffer() {
        while popLast() != nil {}
    }
}

extension Data {
    /// Becomes `bytes`, written over its own buffer: in place when nothing else holds it (a
    /// caller let go of the `Data` it was handed), else in a copy `Data` makes first, so a
    /// caller that kept it still has it as it was. (Emptying it first would make it an inline
    /// `Data` and drop the buffer; so does a count under 15 bytes.)
    mutating func writeOver(with bytes: UnsafeRawBufferPointer) {
        if count != bytes.count { count = bytes.count }
        withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
    }
}
