import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// A connection a request used, named by its two ports (libcurl knows them once connected,
/// for a new connection and a reused one alike). `close()` closes the connections its request
/// used: the engine finds their sockets among those libcurl opened (``LibcurlSockets``) and
/// shuts them down, so the server or proxy sees them end at once, and libcurl drops them from
/// its cache as dead when it next looks.
struct ConnectionID: Equatable, Sendable {
    let localPort: Int
    let remotePort: Int

    /// The connection `easy`'s transfer runs or ran on; nil before it connected. Engine thread.
    init?(_ easy: UnsafeMutableRawPointer) {
        var local = 0, remote = 0
        guard cxhr_easy_get_long(easy, CURLINFO_LOCAL_PORT, &local) == CURLE_OK,
              cxhr_easy_get_long(easy, CURLINFO_PRIMARY_PORT, &remote) == CURLE_OK, local > 0, remote > 0
        else { return nil }
        localPort = local
        remotePort = remote
    }

    /// Whether the socket `descriptor` carries this connection.
    func isCarried(by descriptor: Int32) -> Bool {
        Self.port(descriptor, getsockname) == localPort && Self.port(descriptor, getpeername) == remotePort
    }

    private static func port(_ descriptor: Int32,
                             _ name: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(descriptor, $0, &length) }
        }
        guard found == 0 else { return nil }
        return withUnsafePointer(to: &address) { pointer -> Int? in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: nil
            }
        }
    }
}

/// The sockets libcurl opened and has not closed: it opens and closes them through these
/// callbacks (`CURLOPT_OPENSOCKETFUNCTION`, `CURLOPT_CLOSESOCKETFUNCTION`), always on the
/// engine thread, so the set needs no lock.
enum LibcurlSockets {
    /// One bit per descriptor number, set while libcurl has that socket open. (A `Set<Int32>`
    /// paged in the standard library's hashing code at the first connection of a process, and
    /// had the Swift runtime check `Int32: Hashable` for the set's storage type by scanning
    /// every loaded library's protocol conformances: about 0.2 MiB of resident memory, and
    /// 0.85 MiB with the scan, which `PrivateFiles.makeParentDirectories` caused too.)
    nonisolated(unsafe) private static var open: [UInt64] = []

    /// libcurl's own `socket()` call, remembered; for a handle with a SOCKS5 proxy with
    /// GSS-API (its tunnel is the callback's data), a loopback connection to the tunnel's
    /// connection through the proxy, whose handshake runs on a thread of its own with the
    /// credential cache of now (the engine thread never waits on the proxy).
    static let openCallback: curl_opensocket_callback = { tunnel, _, address in
        guard let address else { return -1 }
        let descriptor: Int32
        if let tunnel {
            let cache = TransferEngine.shared.credentialCache
            descriptor = cache.isEmpty ? cxhr_socks_gss_open(OpaquePointer(tunnel), address, nil)
                : cxhr_socks_gss_open(OpaquePointer(tunnel), address, cache)
        } else {
            // Not inherited by programs the application starts.
            descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue),
                                address.pointee.protocol)
        }
        if descriptor >= 0 {
            let word = Int(descriptor) >> 6
            while open.count <= word { open.append(0) }
            open[word] |= UInt64(1) &<< UInt64(descriptor & 63)
        }
        return descriptor
    }

    static let closeCallback: curl_closesocket_callback = { _, descriptor in
        let word = Int(descriptor) >> 6
        if descriptor >= 0, word < open.count { open[word] &= ~(UInt64(1) &<< UInt64(descriptor & 63)) }
        return Glibc.close(descriptor)
    }

    /// Shuts down the socket of `connection`, if libcurl still has it open: the peer sees the
    /// connection end now; libcurl finds it dead and closes it. Engine thread.
    static func shutDown(_ connection: ConnectionID) {
        for word in open.indices {
            var bits = open[word]
            while bits != 0 {
                let descriptor = Int32(word << 6 + bits.trailingZeroBitCount)
                bits &= bits - 1
                if connection.isCarried(by: descriptor) { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
            }
        }
    }
}
