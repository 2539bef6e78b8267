/// The switches that apply to the next send. They belong to the request object and survive
/// `open`, as in GDHttpRequest.
struct TransferSwitches: Sendable, Equatable {
    var verifyPeer = true
    var verifyHost = true
    var followLocation = true
    var cookies = true
    /// The HTTP proxy to go through, or nil to go direct.
    var proxy: ProxySetting?
    /// Trusted CAs for this request only (`setCACertificateFile`).
    var caFile: String?
    /// Set by `close()`: the next transfer opens a new connection and a full TLS handshake.
    var freshConnection = false
}
