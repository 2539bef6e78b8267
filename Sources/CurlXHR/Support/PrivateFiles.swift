#if canImport(Glibc)
import Glibc
#endif

/// The library's own files (ticket cache, cookie store) live in directories only the user
/// can enter.
enum PrivateFiles {
    /// The directory part of `path` ("." for a bare name).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates the directories above `path` that do not exist, with mode 0700.
    ///
    /// On the bytes of the path, cut at each "/" before its last component. Building the
    /// prefixes as Strings from Substrings went through the standard library's unspecialized
    /// generic code, whose runtime type lookups scan every loaded library's protocol
    /// conformances: the first request of a process paged in about 0.7 MiB more for it
    /// (`LibcurlSockets`).
    static func makeParentDirectories(of path: String) {
        var bytes = Array(path.utf8CString)  // NUL-terminated
        let slash = CChar(UInt8(ascii: "/"))
        // Where the last component starts: the directories end before it.
        var end = bytes.count - 1
        while end > 0, bytes[end - 1] == slash { end -= 1 }
        while end > 0, bytes[end - 1] != slash { end -= 1 }
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in 1..<max(end, 1) where buffer[index] == slash && buffer[index - 1] != slash {
                buffer[index] = 0
                _ = mkdir(buffer.baseAddress!, 0o700)
                buffer[index] = slash
            }
        }
    }
}
