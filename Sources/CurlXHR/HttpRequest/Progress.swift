extension HttpRequest {
    /// How far a send has come (``HttpRequest/getProgress()``): body bytes sent and to send,
    /// received and to receive; -1 where not known.
    public struct Progress: Sendable, Equatable, CustomStringConvertible {
        public var bytesSent: Int64
        public var bytesToSend: Int64
        public var bytesReceived: Int64
        public var bytesToReceive: Int64

        public init(bytesSent: Int64 = 0, bytesToSend: Int64 = 0, bytesReceived: Int64 = 0, bytesToReceive: Int64 = -1) {
            self.bytesSent = bytesSent
            self.bytesToSend = bytesToSend
            self.bytesReceived = bytesReceived
            self.bytesToReceive = bytesToReceive
        }

        public var description: String {
            "sent \(bytesSent) of \(bytesToSend), received \(bytesReceived) of \(bytesToReceive)"
        }
    }

    /// The body bytes a send has to send: -1 for a multipart form, which libcurl sizes.
    static func size(of body: RequestBody, fileSize: Int64) -> Int64 {
        switch body {
        case .none: 0
        case .bytes(let bytes, _): Int64(bytes.count)
        case .file: fileSize
        case .multipart: -1
        }
    }
}
