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
    static func makeParentDirectories(of path: String) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true).dropLast() {
            partial += "/" + component
            _ = mkdir(partial, 0o700)
        }
    }
}
