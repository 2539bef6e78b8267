#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Reading and writing whole buffers through file descriptors (no Foundation FileHandle: the
/// tool starts without Foundation's ICU).
enum StandardStreams {
    /// Writes every byte to `descriptor`; false on an error.
    @discardableResult
    static func write(_ bytes: some ContiguousBytes, to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return false }
                offset += count
            }
            return true
        }
    }

    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        write(Array(text.utf8), to: descriptor)
    }

    /// Everything `descriptor` gives until its end; nil on a read error.
    static func readAll(_ descriptor: Int32) -> Data? {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { data.append(contentsOf: chunk[..<count]); continue }
            if count < 0, errno == EINTR { continue }
            return count == 0 ? data : nil
        }
    }

    /// The content of the file at `path`; nil when it cannot be read.
    static func read(file path: String) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return readAll(descriptor)
    }

    /// The size of a regular file; nil when there is none.
    static func size(of path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}

/// Numbers and names in columns, as printf's `%W.Df` and `%-Ws` (no Foundation formatting).
enum Fixed {
    /// `value` with `decimals` digits after the point, right-aligned in `width` characters.
    static func text(_ value: Double, decimals: Int, width: Int = 0) -> String {
        guard value.isFinite else { return padded("\(value)", to: width, left: true) }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        var text = String(scaled / scale)
        if decimals > 0 {
            let fraction = String(scaled % scale)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        if value < 0, scaled != 0 { text = "-" + text }
        return padded(text, to: width, left: true)
    }

    /// `text` filled with spaces to `width` characters, on the right (or the left).
    static func padded(_ text: String, to width: Int, left: Bool = false, fill: Character = " ") -> String {
        let fill = String(repeating: fill, count: max(0, width - text.count))
        return left ? fill + text : text + fill
    }
}

/// Trimming without Foundation's CharacterSet.
enum Text {
    /// `text` without its leading and trailing blanks and line ends.
    static func trimmed(_ text: some StringProtocol) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
