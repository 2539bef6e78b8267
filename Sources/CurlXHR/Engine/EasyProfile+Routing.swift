import CCurlShim

extension EasyProfile.Fields {
    /// The routing switches (``HttpRequest/setResolve(_:)`` and its kin): set only when the
    /// request has them, so a request without them costs one test of each. The lists live in
    /// the handle (libcurl does not copy them) until its next reset.
    func applyRouting(_ options: inout EasyOptions, handle: EasyHandle) {
        let routing = switches.routing
        if !routing.resolve.isEmpty || !routing.connectTo.isEmpty {
            let lines = RouteEntries.curlLines(resolve: routing.resolve, connectTo: routing.connectTo)
            // CURLOPT_CONNECT_TO: "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT", the first match
            // wins; CURLOPT_RESOLVE: "HOST:PORT:ADDRESS[,ADDRESS]", loaded into the DNS cache
            // as the transfer starts (for the aliases only: see `RouteEntries.curlLines`).
            options.set(CURLOPT_CONNECT_TO, lines: lines.connectTo, keptBy: handle)
            if !lines.resolve.isEmpty { options.set(CURLOPT_RESOLVE, lines: lines.resolve, keptBy: handle) }
        }
        if let socket = routing.unixSocket {
            // The abstract namespace's name goes without the '@' (libcurl adds the leading NUL).
            if socket.hasPrefix("@") {
                options.set(CURLOPT_ABSTRACT_UNIX_SOCKET, String(socket.dropFirst()))
            } else {
                options.set(CURLOPT_UNIX_SOCKET_PATH, socket)
            }
        }
        if let interface = routing.interface { options.set(CURLOPT_INTERFACE, interface) }
        if let serviceName = routing.serviceName { options.set(CURLOPT_SERVICE_NAME, serviceName) }
        if routing.forbidReuse {
            // A connection of its own (never one from the pool), closed when the transfer ends.
            options.set(CURLOPT_FRESH_CONNECT, 1)
            options.set(CURLOPT_FORBID_REUSE, 1)
        }
    }
}
