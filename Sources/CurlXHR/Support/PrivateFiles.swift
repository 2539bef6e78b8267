#if canImport(Glibc)
import Glibc
#endif

/// The library's own files (ticket cache, cookie store) live in directories only the user
/// can enter.
package enum PrivateFiles {
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

extension PrivateFiles {
    /// A system call's failure: its `errno`.
    package struct Failure: Error, CustomStringConvertible {
        package let code: Int32
        package init(_ code: Int32) { self.code = code }
        package var description: String { String(cString: strerror(code)) }
    }

    /// Runs `work` holding an exclusive lock on `<path>.lock` (made with mode 0600 if need be),
    /// a file that outlives the renames of `path`: processes sharing `path` take turns.
    package static func withLock<Value>(on path: String, _ work: () throws -> Value) rethrows -> Value {
        makeParentDirectories(of: path)
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if descriptor >= 0 { _ = close(descriptor) } }
        return try work()
    }

    /// The whole content of `path`; a missing file throws `ENOENT`.
    package static func contents(of path: String) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(errno) }
        defer { _ = close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { bytes += chunk[..<count]; continue }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw Failure(errno) }
            return bytes
        }
    }

    /// Replaces `path` with `bytes` atomically, mode 0600: a temporary file beside it, synced,
    /// renamed over `path`, and the directory synced. A failure leaves `path` as it was.
    package static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        makeParentDirectories(of: path)
        let temporary = "\(path).tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(errno) }
        let written = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let synced = written && fsync(descriptor) == 0
        let error = errno
        _ = close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            let failure = synced ? errno : error
            unlink(temporary)
            throw Failure(failure)
        }
        syncDirectory(of: path)
    }

    /// Removes `path` (a missing file is no failure) and syncs its directory, so the removal
    /// survives a crash.
    package static func remove(_ path: String) throws(Failure) {
        guard unlink(path) == 0 || errno == ENOENT else { throw Failure(errno) }
        syncDirectory(of: path)
    }

    /// One line on standard error, for a store that cannot tell a caller (requests go on).
    package static func log(_ text: String) {
        let line = Array("CurlXHR: \(text)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    private static func syncDirectory(of path: String) {
        let descriptor = open(parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            _ = close(descriptor)
        }
    }
}
