#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The certificate and key a request shows a TLS server that asks for one
/// (``HttpRequest/setClientCertificate(_:format:keyPath:password:)``): files, or PKCS#12
/// bytes held in memory. Checked when set, so that a path that cannot be read or a password
/// libcurl cannot take is a `false` from the call, not a failed send.
struct ClientIdentity: Sendable, Equatable {
    enum Source: Sendable, Equatable {
        /// A certificate file, with its key in `keyPath` or in the same file.
        case file(String)
        /// A PKCS#12 bundle (certificate and key) in memory.
        case pkcs12([UInt8])
    }

    let source: Source
    let format: HttpRequest.CertificateFormat
    let keyPath: String?
    /// The key's format: the certificate's unless xhr's `--key-type` says otherwise.
    let keyFormat: HttpRequest.CertificateFormat
    /// The key's (or the bundle's) password. Without one libcurl is given "" rather than
    /// nothing: OpenSSL would otherwise ask for an encrypted key's password on the terminal
    /// and wait there; with "" it refuses the key (curl's exit 58).
    let password: String

    /// The certificate as a failure's text names it: its path, quoted as libcurl quotes it.
    var name: String {
        switch source {
        case .file(let path): "'\(MessageValidation.escaped(path))'"
        case .pkcs12: "the PKCS#12 bytes given in memory"
        }
    }

    /// The identity in the files at `path` (and `keyPath`), or why it cannot be one.
    static func files(_ path: String, format: HttpRequest.CertificateFormat, keyPath: String?,
                      keyFormat: HttpRequest.CertificateFormat? = nil, password: String?) -> Result<ClientIdentity, ReadableFile.Problem> {
        if let problem = fileProblem(path, naming: "certificate") ?? keyPath.flatMap({ fileProblem($0, naming: "key") })
            ?? passwordProblem(password) {
            return .failure(ReadableFile.Problem(message: problem))
        }
        if format == .pkcs12, keyPath != nil {
            return .failure(ReadableFile.Problem(message: "a PKCS#12 file holds its key: give no key path with it"))
        }
        if keyFormat == .pkcs12 {
            return .failure(ReadableFile.Problem(message: "a key is PEM or DER; PKCS#12 is a certificate's format"))
        }
        return .success(ClientIdentity(source: .file(path), format: format, keyPath: keyPath,
                                       keyFormat: keyFormat ?? format, password: password ?? ""))
    }

    /// The identity in a PKCS#12 bundle held in memory, or why it cannot be one.
    static func pkcs12(_ data: [UInt8], password: String?) -> Result<ClientIdentity, ReadableFile.Problem> {
        // PKCS#12 is DER: a SEQUENCE, whose first byte is 0x30.
        guard data.first == 0x30 else {
            return .failure(ReadableFile.Problem(message: data.isEmpty ? "the PKCS#12 data is empty"
                                                     : "the data is not PKCS#12 (DER, starting with a SEQUENCE)"))
        }
        if let problem = passwordProblem(password) { return .failure(ReadableFile.Problem(message: problem)) }
        return .success(ClientIdentity(source: .pkcs12(data), format: .pkcs12, keyPath: nil, keyFormat: .pkcs12, password: password ?? ""))
    }

    private static func fileProblem(_ path: String, naming what: String) -> String? {
        if path.isEmpty || path.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) {
            return "the \(what) path '\(MessageValidation.escaped(path))' is empty or contains CR, LF or NUL"
        }
        return ReadableFile.problem(path).map { "the \(what): \($0)" }
    }

    private static func passwordProblem(_ password: String?) -> String? {
        guard let password, password.utf8.contains(0) else { return nil }
        return "the certificate's password contains a NUL byte, which libcurl cannot take"
    }
}

/// Public keys a server's certificate must have one of (``HttpRequest/setPinnedPublicKeys(_:)``,
/// ``HttpRequest/setProxyPinnedPublicKeys(_:)``), in libcurl's syntax
/// (`CURLOPT_PINNEDPUBLICKEY`): SHA-256 hashes of the DER SubjectPublicKeyInfo,
/// `sha256//BASE64[;sha256//BASE64…]`, or the path of a public key in PEM or DER.
struct PublicKeyPins: Sendable, Equatable {
    /// libcurl's limit on a public-key file (`MAX_PINNED_PUBKEY_SIZE`).
    static let maxFileSize: Int64 = 1_048_576

    /// The pins as given (libcurl checks the server's key against them itself).
    let text: String
    /// The SHA-256 hashes, 32 bytes each, back to back.
    let hashes: [UInt8]
    /// A key file's DER SubjectPublicKeyInfo (empty for hashes).
    let key: [UInt8]

    /// Why `pins` cannot be a pin list or key file, or nil when it can.
    static func problem(_ pins: String) -> String? {
        if case .failure(let problem) = parse(pins) { return problem.message }
        return nil
    }

    /// The hashes of `pins`, or the key of the file it names; or why it is neither.
    static func parse(_ pins: String) -> Result<PublicKeyPins, ReadableFile.Problem> {
        func refused(_ message: String) -> Result<PublicKeyPins, ReadableFile.Problem> { .failure(ReadableFile.Problem(message: message)) }
        if pins.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) {
            return refused("the pins '\(MessageValidation.escaped(pins))' contain CR, LF or NUL")
        }
        guard pins.hasPrefix("sha256//") else {
            return keyFile(pins).map { PublicKeyPins(text: pins, hashes: [], key: $0) }
        }
        var hashes: [UInt8] = []
        for pin in pins.split(separator: ";", omittingEmptySubsequences: false) {
            guard pin.hasPrefix("sha256//"), let hash = Data(base64Encoded: String(pin.dropFirst(8))), hash.count == 32 else {
                return refused("'\(MessageValidation.escaped(String(pin)))' is not a pin: each is sha256// and the base64 of a 32-byte SHA-256 hash, separated by ';'")
            }
            hashes += hash
        }
        return .success(PublicKeyPins(text: pins, hashes: hashes, key: []))
    }

    /// The DER SubjectPublicKeyInfo in the PEM or DER file at `path`.
    private static func keyFile(_ path: String) -> Result<[UInt8], ReadableFile.Problem> {
        let shown = MessageValidation.escaped(path)
        func refused(_ message: String) -> Result<[UInt8], ReadableFile.Problem> { .failure(ReadableFile.Problem(message: message)) }
        if path.isEmpty { return refused("no pins given: sha256//BASE64[;sha256//BASE64…] or a public key's path") }
        let file: (descriptor: Int32, size: Int64)
        switch ReadableFile.open(path) {
        case .failure(let problem): return refused("the pins are neither sha256//… hashes nor a public key's file: \(problem.message)")
        case .success(let opened): file = opened
        }
        defer { _ = close(file.descriptor) }
        guard file.size > 0, file.size <= maxFileSize else { return refused("the public key file '\(shown)' is empty or larger than 1 MiB") }
        var bytes = [UInt8](repeating: 0, count: Int(file.size))
        let count = bytes.withUnsafeMutableBytes { read(file.descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return refused("the public key file '\(shown)' cannot be read") }
        bytes.removeSubrange(count...)
        if bytes.first == 0x30 { return .success(bytes) }
        // PEM: the base64 between libcurl's one accepted pair of lines.
        if let body = between(bytes, Array("-----BEGIN PUBLIC KEY-----".utf8), Array("-----END PUBLIC KEY-----".utf8)),
           let der = Data(base64Encoded: Data(body), options: .ignoreUnknownCharacters), der.first == 0x30 {
            return .success(Array(der))
        }
        return refused("the file '\(shown)' is not a public key in PEM or DER")
    }

    /// The bytes after the first `begin` and before the `end` that follows it.
    private static func between(_ bytes: [UInt8], _ begin: [UInt8], _ end: [UInt8]) -> ArraySlice<UInt8>? {
        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
            return (start...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        guard let first = find(begin, from: 0), let last = find(end, from: first + begin.count) else { return nil }
        return bytes[(first + begin.count)..<last]
    }
}
