/// Routing: where a request's connections go, and whether they are its own. Pre-send switches
/// (UNSENT, OPENED, DONE; they apply to the next send and stay for later ones). A request with
/// resolve or connect-to entries or a Unix socket takes no part in the HTTP cache: its answer
/// may not be the URL's for other requests, and a stored one would hide the server it names.
extension HttpRequest {
    /// Connects to the given addresses instead of those a host name resolves to, as curl's
    /// `--resolve` (libcurl's `CURLOPT_RESOLVE`): each entry is `HOST:PORT:ADDRESS[,ADDRESS…]`,
    /// HOST a host name or `*` (any host, after the named ones), PORT 1–65535, each ADDRESS a
    /// numerical IPv4 or IPv6 address (brackets allowed), tried in order; `+` before HOST is
    /// accepted (and changes nothing), and `-HOST:PORT` takes an earlier entry of the list out.
    /// The URL stays as it is: the `Host` field, cookies and TLS (SNI and the certificate's
    /// name check) use its host. Redirects to a listed host and port follow the entries too.
    /// The entries hold for this request only (other requests to the host are not affected,
    /// and never share its connections); `[]` removes them. A connection that fails ends in
    /// DONE, status 0, `.connection` (curl's exit 7), with the addresses in the text.
    /// - Parameter entries: the entries, in curl's syntax.
    /// - Returns: `false` with ``lastError`` for an entry with CR, LF or NUL, a host that is not
    ///   a host name, a port outside 1–65535, an address that is not a numerical one, no
    ///   address, more than 1000 entries or one over 4096 bytes; or a request in flight.
    @discardableResult
    public func setResolve(_ entries: [String]) -> Bool {
        switch RouteEntries.resolve(entries) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let parsed): return changeSwitches { $0.routing.resolve = parsed }
        }
    }

    /// Connects to another host and port than the URL's, as curl's `--connect-to` (libcurl's
    /// `CURLOPT_CONNECT_TO`): each entry is `HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT`; an
    /// empty HOST or PORT matches any, an empty CONNECT-TO-HOST or CONNECT-TO-PORT keeps the
    /// request's own; an IPv6 address goes in brackets. The first entry that matches the URL's
    /// host and port is used. The URL stays as it is: the `Host` field, cookies and TLS (SNI and
    /// the certificate's name check) use its host. ``setResolve(_:)``'s entries resolve the
    /// CONNECT-TO-HOST they name. `[]` removes the entries.
    /// - Parameter entries: the entries, in curl's syntax.
    /// - Returns: `false` with ``lastError`` for an entry with CR, LF or NUL, other than four
    ///   parts, a host that is not a host name or bracketed IPv6 address, a port outside
    ///   1–65535, more than 1000 entries or one over 4096 bytes; or a request in flight.
    @discardableResult
    public func setConnectTo(_ entries: [String]) -> Bool {
        switch RouteEntries.connectTo(entries) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let parsed): return changeSwitches { $0.routing.connectTo = parsed }
        }
    }

    /// Connects through a Unix domain socket instead of TCP, as curl's `--unix-socket` and
    /// `--abstract-unix-socket` (libcurl's `CURLOPT_UNIX_SOCKET_PATH` and
    /// `CURLOPT_ABSTRACT_UNIX_SOCKET`): a file path (a symbolic link to a socket is followed,
    /// as `connect` does), or `@NAME` for NAME in Linux's abstract namespace. The URL still
    /// gives the `Host` field and, for https, the name TLS checks. A socket that is missing or
    /// refuses the connection ends the send in DONE, status 0, `.connection` (curl's exit 7).
    /// `nil` goes back to TCP.
    /// - Parameter path: the socket's path, `@NAME`, or `nil`.
    /// - Returns: `false` with ``lastError`` for an empty path or name, one with CR, LF or NUL,
    ///   one over 107 bytes (what `sun_path` holds), or a request in flight.
    @discardableResult
    public func setUnixSocket(_ path: String?) -> Bool {
        if let path, let problem = RouteEntries.unixSocketProblem(path) {
            return refuse(.invalidArgument, problem)
        }
        return changeSwitches { $0.routing.unixSocket = path }
    }

    /// Sends from a network interface (`lo`, `eth0`; `if!NAME` as curl writes it) or a local
    /// numerical address, as curl's `--interface` (libcurl's `CURLOPT_INTERFACE`; a name is
    /// never looked up as a host name). One that does not exist, or cannot reach the server,
    /// ends the send in DONE, status 0, `.connection` and libcurl's text (curl's exit 45 when it
    /// cannot be used at all). `nil` lets the system choose.
    /// - Parameter name: the interface's name or address, or `nil`.
    /// - Returns: `false` with ``lastError`` for a name with CR, LF or NUL, an empty one, one of
    ///   16 bytes or more, one with '/', ':' or a space (that is not a numerical address), curl's
    ///   `host!NAME` (a name is always an interface's), or a request in flight.
    @discardableResult
    public func setInterface(_ name: String?) -> Bool {
        guard let name else { return changeSwitches { $0.routing.interface = nil } }
        switch RouteEntries.interface(name) {
        case .failure(let problem): return refuse(.invalidArgument, problem.message)
        case .success(let value): return changeSwitches { $0.routing.interface = value }
        }
    }

    /// The Kerberos service Negotiate asks a ticket for, as curl's `--service-name` (libcurl's
    /// `CURLOPT_SERVICE_NAME`): the ticket is for `NAME/host` (`NAME@host` in GSS-API's terms),
    /// `HTTP` by default. A server that holds no key for that service answers the login with
    /// its 401, which the request reports as the response. `nil` goes back to `HTTP`.
    /// - Parameter name: the service, as `HTTP`, or `nil`.
    /// - Returns: `false` with ``lastError`` for an empty name, one with CR, LF, NUL, a space,
    ///   '/' or '@', one over 255 bytes, or a request in flight.
    @discardableResult
    public func setServiceName(_ name: String?) -> Bool {
        if let name, let problem = RouteEntries.serviceNameProblem(name) {
            return refuse(.invalidArgument, problem)
        }
        return changeSwitches { $0.routing.serviceName = name }
    }

    /// Makes every send of this request open a connection of its own and close it when the
    /// send ends (libcurl's `CURLOPT_FRESH_CONNECT` and `CURLOPT_FORBID_REUSE`; mesibo's
    /// `persistent = false`): no connection another request opened is used, and none is left
    /// for another request. Each send pays for a new connection (and a TLS handshake).
    /// - Returns: `false` with ``lastError`` for a request in flight.
    @discardableResult
    public func disableConnectionReuse() -> Bool {
        changeSwitches { $0.routing.forbidReuse = true }
    }
}
