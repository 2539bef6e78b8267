extension HttpRequest {
    /// Receives an `async` send's progress (``response(timeout:progress:)``): body bytes sent
    /// and to send, received and to receive.
    public typealias ProgressHandler = @Sendable (Progress) -> Void

    /// How far a send has come (``HttpRequest/getProgress()``): body bytes sent and to send,
    /// received and to receive; -1 where not known.
    public struct Progress: Sendable, Equatable, CustomStringConvertible {
        /// Body bytes sent so far (headers not counted).
        public var bytesSent: Int64
        /// Body bytes the request sends in all: 0 without a body, -1 while not known (a
        /// multipart form until libcurl has sized it).
        public var bytesToSend: Int64
        /// Body bytes of the final response received so far (after decoding, when the body came
        /// compressed).
        public var bytesReceived: Int64
        /// Body bytes the final response announces (`Content-Length`), -1 while not known: before
        /// the head, without a `Content-Length`, or for a compressed body (unless mesibo's
        /// `Content-Size` says).
        public var bytesToReceive: Int64

        /// Counts as given; by default nothing sent or to send, nothing received, and the size to
        /// receive unknown.
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
