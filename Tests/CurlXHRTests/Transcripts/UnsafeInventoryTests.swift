import Foundation
import Testing

/// docs/UNSAFE.md lists every place under Sources/ where Swift's checks are off: for each file
/// and marker, the number of lines that hold it. A marker added or removed without its line
/// in the inventory fails here.
@Suite(.ownThreads) struct UnsafeInventoryTests {
    static let markers = ["@exclusivity(unchecked)", "@unchecked Sendable", "nonisolated(unsafe)", "withUnsafeContinuation",
                          "withUnsafeThrowingContinuation", "Unmanaged", "unsafeDowncast", "_withUnsafeGuaranteedRef",
                          "unowned(unsafe)", "unsafeBitCast", "@_unsafeInheritExecutor"]

    /// (file, marker) → lines holding the marker, over the Swift sources.
    static func counted() throws -> [String: Int] {
        let root = TestEnvironment.packageRoot
        var counts: [String: Int] = [:]
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        for file in files {
            let relative = String(file.path.dropFirst(root.path.count + 1))
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
                for marker in markers where line.contains(marker) {
                    counts["\(relative) \(marker)", default: 0] += 1
                }
            }
        }
        return counts
    }

    /// The inventory's rows: `| `file` | `marker` | count | …`.
    static func listed() throws -> [String: Int] {
        let text = try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent("docs/UNSAFE.md"), encoding: .utf8)
        var rows: [String: Int] = [:]
        for match in text.matches(of: /^\| `([^`]+)` \| `([^`]+)` \| (\d+) \|/.anchorsMatchLineEndings()) {
            rows["\(match.output.1) \(match.output.2)", default: 0] += Int(match.output.3) ?? 0
        }
        return rows
    }

    @Test func everyUnsafePlaceIsInTheInventoryWithItsCount() throws {
        let counted = try Self.counted(), listed = try Self.listed()
        #expect(!counted.isEmpty && !listed.isEmpty)
        for (place, count) in counted.sorted(by: { $0.key < $1.key }) {
            #expect(listed[place] == count, "\(place): \(count) in the sources, \(listed[place].map(String.init) ?? "no row") in docs/UNSAFE.md")
        }
        for place in Set(listed.keys).subtracting(counted.keys).sorted() {
            Issue.record("docs/UNSAFE.md lists \(place), which the sources no longer have")
        }
    }
}
