#if canImport(Glibc)
import Glibc
#endif

/// The library's own files (ticket cache, cookie store, token file, cache) live in directories
/// only the user can enter, and are never written through a planted symbolic link.
package enum PrivateFiles {
    /// The directory part of `path` ("." for a bare name).
    static func parent(of path: String) -> String { split(path).folder }

    /// The last component of `path`.
    package static func name(of path: String) -> String { split(path).name }

    /// `path` cut at its last "/", on its bytes and through C strings (as
    /// ``makeParentDirectories(of:)``, for the same reason: no generic String code).
    private static func split(_ path: String) -> (folder: String, name: String) {
        var bytes = Array(path.utf8CString)  // NUL-terminated
        let slash = CChar(UInt8(ascii: "/"))
        guard let cut = bytes.lastIndex(of: slash) else { return (".", path) }
        return bytes.withUnsafeMutableBufferPointer { buffer in
            let name = String(cString: buffer.baseAddress! + cut + 1)
            if cut == 0 { return ("/", name) }
            buffer[cut] = 0
            return (String(cString: buffer.baseAddress!), name)
        }
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
        package var description: String {
            // O_NOFOLLOW's answer for a link where a file of the library's should be.
            code == ELOOP ? "a symbolic link, not followed" : String(cString: strerror(code))
        }
    }

    /// Runs `work` holding an exclusive lock on the folder of `path` (made with mode 0700 if
    /// need be): the folder outlives the renames of `path`, and the lock leaves no file
    /// behind. Processes sharing `path` take turns (with those of the other files of the folder,
    /// for as long as a read or a write takes). A folder that cannot be opened: `work` runs
    /// without the lock.
    package static func withLock<Value>(on path: String, _ work: () throws -> Value) rethrows -> Value {
        let folder = (try? openFolder(of: path, creating: true)) ?? -1
        if folder >= 0 {
            while flock(folder, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if folder >= 0 { _ = close(folder) } }
        return try work()
    }

    /// The whole content of `path`; a missing file throws `ENOENT`, a symbolic link `ELOOP`.
    package static func contents(of path: String) throws(Failure) -> [UInt8] {
        let folder = try openFolder(of: path, creating: false)
        defer { _ = close(folder) }
        let descriptor = try openFile(name(of: path), in: folder, O_RDONLY)
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

    /// Replaces `path` with `bytes` atomically, mode 0600 (``replace(_:in:with:mode:)`` in
    /// its folder, made first if need be).
    package static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        let folder = try openFolder(of: path, creating: true)
        defer { _ = close(folder) }
        try replace(name(of: path), in: folder, with: bytes)
    }

    /// Removes `path` (a missing file is no failure; a link is removed, not followed) and
    /// syncs its folder, so the removal survives a crash.
    package static func remove(_ path: String) throws(Failure) {
        let folder: Int32
        do {
            folder = try openFolder(of: path, creating: false)
        } catch {
            if error.code == ENOENT { return }
            throw error
        }
        defer { _ = close(folder) }
        guard unlinkat(folder, name(of: path), 0) == 0 || errno == ENOENT else { throw Failure(errno) }
        _ = fsync(folder)
    }

    /// One line on standard error, for a store that cannot tell a caller (requests go on).
    package static func log(_ text: String) {
        let line = Array("CurlXHR: \(text)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

// MARK: Files under an opened folder

/// Every file of the library's is reached through its folder, opened once (`openat` and its
/// kin), and never through a symbolic link someone planted where the file goes: files opened
/// in place take `O_NOFOLLOW`, temporary files are new ones (`O_EXCL`, a random name), and a
/// folder the library makes inside another one is opened with `O_NOFOLLOW` too. The folders
/// of a path the caller gave are the caller's choice, and followed.
extension PrivateFiles {
    /// The folder of `path` opened (made first with the folders above it, mode 0700, when
    /// `creating`): a descriptor for the calls below, which the caller closes.
    package static func openFolder(of path: String, creating: Bool) throws(Failure) -> Int32 {
        if creating { makeParentDirectories(of: path) }
        return try openFolder(parent(of: path), creating: false)
    }

    /// The folder `path` opened (made first with the folders above it, mode 0700, when
    /// `creating`); the caller closes it.
    package static func openFolder(_ path: String, creating: Bool) throws(Failure) -> Int32 {
        if creating {
            makeParentDirectories(of: path)
            _ = mkdir(path, 0o700)
        }
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(errno) }
        return descriptor
    }

    /// The folder `name` inside `folder` opened (made first, mode 0700, when `creating`); a
    /// symbolic link there is refused (`ELOOP`), not followed. The caller closes it.
    package static func openFolder(_ name: String, in folder: Int32, creating: Bool) throws(Failure) -> Int32 {
        if creating { _ = mkdirat(folder, name, 0o700) }
        let descriptor = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            // O_DIRECTORY answers a link with ENOTDIR: say it is a link.
            let code = errno
            var info = stat()
            let isLink = code == ENOTDIR && fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
            throw Failure(isLink ? ELOOP : code)
        }
        return descriptor
    }

    /// `name` in `folder` opened with `flags` (made with `mode` when they hold `O_CREAT`),
    /// never through a symbolic link: a link there fails with `ELOOP`. The caller closes it.
    package static func openFile(_ name: String, in folder: Int32, _ flags: Int32, mode: mode_t = 0o600) throws(Failure) -> Int32 {
        while true {
            let descriptor = openat(folder, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw Failure(errno) }
        }
    }

    /// A new, empty file `name` in `folder`, opened for writing: whatever was there is removed
    /// first (a planted link included, never followed) and the file is made afresh (`O_EXCL`),
    /// so that a link planted again meanwhile fails with `EEXIST`. The caller closes it.
    package static func makeFile(_ name: String, in folder: Int32, mode: mode_t = 0o600) throws(Failure) -> Int32 {
        _ = unlinkat(folder, name, 0)
        return try openFile(name, in: folder, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
    }

    /// A new file beside `name` in `folder` to write and then rename over it: `<name>.tmp-`
    /// and 16 random hexadecimal digits, made afresh (`O_EXCL`), so that nothing planted under
    /// a name known in advance is written through or reused. The caller closes it.
    package static func makeTemporary(for name: String, in folder: Int32, mode: mode_t = 0o600) throws(Failure) -> (name: String, descriptor: Int32) {
        var random = SystemRandomNumberGenerator()
        while true {
            let digits = String(random.next() as UInt64, radix: 16)
            let temporary = name + ".tmp-" + String(repeating: "0", count: 16 - digits.count) + digits
            do {
                return (temporary, try openFile(temporary, in: folder, O_WRONLY | O_CREAT | O_EXCL, mode: mode))
            } catch let failure where failure.code == EEXIST {
                continue  // taken: another name
            }
        }
    }

    /// Replaces `name` in `folder` with `bytes` atomically: a temporary file beside it
    /// (``makeTemporary(for:in:mode:)``), synced, renamed over `name`, and the folder synced.
    /// A failure leaves `name` as it was.
    package static func replace(_ name: String, in folder: Int32, with bytes: [UInt8], mode: mode_t = 0o600) throws(Failure) {
        let (temporary, descriptor) = try makeTemporary(for: name, in: folder, mode: mode)
        let synced = writeAll(bytes, to: descriptor) && fsync(descriptor) == 0
        let error = errno
        _ = close(descriptor)
        guard synced, renameat(folder, temporary, folder, name) == 0 else {
            let failure = synced ? errno : error
            _ = unlinkat(folder, temporary, 0)
            throw Failure(failure)
        }
        _ = fsync(folder)
    }

    /// Writes all of `bytes` to `descriptor`; whether it could (`errno` says why not).
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }
}
