extension Array {
    /// Empties the array and keeps its buffer for the next round of the loop that fills it.
    /// Popping from the end costs less than `removeAll(keepingCapacity:)` (a generic
    /// `replaceSubrange`) for the few elements such a round holds.
    mutating func removeAllKeepingBuffer() {
        while popLast() != nil {}
    }
}
