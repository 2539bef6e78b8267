import CDigestMD5
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The server `xhr demo` talks to: SwiftNIO's HTTP/1.1 server on 127.0.0.1, inside the
/// process. Basic and Digest (MD5, qop=auth) are checked for real.
final class DemoServer: Sendable {
    static let user = "alice"
    static let password = "wonderland"
    static let realm = "xhr-demo"

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel
    let port: Int
    /// The Digest nonces this server handed out.
    private let nonces = NIOLockedValueBox(Set<String>())

    init() throws {
        let nonces = self.nonces
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(DemoHandler(nonces: nonces))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

private final class DemoHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let nonces: NIOLockedValueBox<Set<String>>
    private var head: HTTPRequestHead?
    private var body = ""

    init(nonces: NIOLockedValueBox<Set<String>>) {
        self.nonces = nonces
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = ""
        case .body(var buffer):
            body += buffer.readString(length: buffer.readableBytes) ?? ""
        case .end:
            if let head { route(head, context: context) }
        }
    }

    private func route(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        switch path {
        case "/hello":
            respond(context, .ok, "Hello from the server inside xhr demo.\n")
        case "/form":
            let fields = body.split(separator: "&").map { pair -> String in
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    Self.percentDecoded(String($0.replacing("+", with: " ")))
                }
                return parts.joined(separator: " = ")
            }
            respond(context, .ok, "received \(head.method) \(head.headers["Content-Type"].first ?? "")\n"
                    + fields.joined(separator: "\n") + "\n")
        case "/drip":
            drip(context, chunks: 5, interval: .milliseconds(150))
        case "/slow":
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .seconds(10)) { bound.value.0.respond(bound.value.1, .ok, "too late\n") }
        case "/redirect":
            respond(context, .found, "see /hello\n", headers: [("Location", "/hello")])
        case "/cookie/set":
            respond(context, .ok, "a cookie for you\n", headers: [("Set-Cookie", "flavour=chocolate; Path=/")])
        case "/cookie/show":
            respond(context, .ok, "Cookie: \(head.headers["Cookie"].first ?? "(none)")\n")
        case "/basic":
            let expected = "Basic " + Data("\(DemoServer.user):\(DemoServer.password)".utf8).base64EncodedString()
            if head.headers["Authorization"].first == expected {
                respond(context, .ok, "Basic: welcome, \(DemoServer.user)\n")
            } else {
                respond(context, .unauthorized, "who are you?\n", headers: [("WWW-Authenticate", "Basic realm=\"\(DemoServer.realm)\"")])
            }
        case "/digest":
            if let user = verifyDigest(head) {
                respond(context, .ok, "Digest: welcome, \(user)\n")
            } else {
                let nonce = (0..<16).map { _ in Fixed.padded(String(UInt8.random(in: 0...255), radix: 16), to: 2, left: true, fill: "0") }.joined()
                nonces.withLockedValue { _ = $0.insert(nonce) }
                let challenge = "Digest realm=\"\(DemoServer.realm)\", qop=\"auth\", algorithm=MD5, nonce=\"\(nonce)\""
                respond(context, .unauthorized, "who are you?\n", headers: [("WWW-Authenticate", challenge)])
            }
        default:
            respond(context, .notFound, "no such page\n")
        }
    }

    /// RFC 7616 with MD5 and qop=auth: the user name when the response is right.
    private func verifyDigest(_ head: HTTPRequestHead) -> String? {
        guard let header = head.headers["Authorization"].first, header.hasPrefix("Digest ") else { return nil }
        var fields: [String: String] = [:]
        let pattern = /([a-zA-Z]+)=(?:"([^"]*)"|([^,\s]*))/
        for match in header.dropFirst(7).matches(of: pattern) {
            fields[String(match.1).lowercased()] = String(match.2 ?? match.3 ?? "")
        }
        guard let user = fields["username"], user == DemoServer.user, let nonce = fields["nonce"],
              nonces.withLockedValue({ $0.contains(nonce) }), let uri = fields["uri"], let nc = fields["nc"],
              let cnonce = fields["cnonce"], fields["qop"] == "auth", let response = fields["response"] else { return nil }
        func md5(_ text: String) -> String {
            var hex = [CChar](repeating: 0, count: 33)
            let bytes = Array(text.utf8)
            guard cxhr_md5_hex(bytes, bytes.count, &hex) == 0 else { return "" }
            return String(decoding: hex.prefix(32).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let ha1 = md5("\(user):\(DemoServer.realm):\(DemoServer.password)")
        let ha2 = md5("\(head.method.rawValue):\(uri)")
        return md5("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)") == response ? user : nil
    }

    private func respond(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ text: String,
                         headers extra: [(String, String)] = []) {
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(text.utf8.count)")])
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// A body of `chunks` lines, one every `interval`.
    private func drip(_ context: ChannelHandlerContext, chunks: Int, interval: TimeAmount) {
        let line: @Sendable (Int) -> String = { "chunk \($0 + 1) of \(chunks)\n" }
        let length = (0..<chunks).map { line($0).utf8.count }.reduce(0, +)
        let headers = HTTPHeaders([("Content-Type", "text/plain"), ("Content-Length", "\(length)")])
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        for index in 0..<chunks {
            context.eventLoop.scheduleTask(in: interval * Int64(index + 1)) {
                let (handler, context) = bound.value
                context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: line(index))))), promise: nil)
                if index == chunks - 1 { context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil) }
            }
        }
    }
}

extension DemoHandler {
    /// `%XX` escapes decoded (the form values the demo posts); a text with a bad escape as it is.
    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
