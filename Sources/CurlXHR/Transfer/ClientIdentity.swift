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

/// Public keys a server's certificate must have one of (``HttpRequest/setPinnedPublicKeys(_:)``),
/// in libcurl's syntax (`CURLOPT_PINNEDPUBLICKEY`): SHA-256 hashes of the DER
/// SubjectPublicKeyInfo, `sha256//BASE64[;sha256//BASE64…]`, or the path of a public key in
/// PEM or DER.
enum PublicKeyPins {
    /// libcurl's limit on a public-key file (`MAX_PINNED_PUBKEY_SIZE`).
    static let maxFileSize: Int64 = 1_048_576

    /// Why `pins` cannot be a pin list or key file, or nil when it can.
    static func problem(_ pins: String) -> String? {
        let shown = MessageValidation.escaped(pins)
        if pins.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) {
            return "the pins '\(shown)' contain CR, LF or NUL"
        }
        if pins.hasPrefix("sha256//") {
            for pin in pins.split(separator: ";", omittingEmptySubsequences: false) {
                guard pin.hasPrefix("sha256//"), let hash = Data(base64Encoded: String(pin.dropFirst(8))), hash.count == 32 else {
                    return "'\(MessageValidation.escaped(String(pin)))' is not a pin: each is sha256// and the base64 of a 32-byte SHA-256 hash, separated by ';'"
                }
            }
            return nil
        }
        return keyFileProblem(pins)
    }

    private static func keyFileProblem(_ path: String) -> String? {
        let shown = MessageValidation.escaped(path)
        if path.isEmpty { return "no pins given: sha256//BASE64[;sha256//BASE64…] or a public key's path" }
        switch ReadableFile.open(path) {
        case .failure(let problem):
            return "the pins are neither sha256//… hashes nor a public key's file: \(problem.message)"
        case .success(let file):
            defer { _ = close(file.descriptor) }
            guard file.size > 0, file.size <= maxFileSize else {
                return "the public key file '\(shown)' is empty or larger than 1 MiB"
            }
            var start = [UInt8](repeating: 0, count: 32)
            let count = read(file.descriptor, &start, start.count)
            let isPEM = count > 0 && start[..<count].starts(with: "-----BEGIN".utf8)
            let isDER = count > 0 && start[0] == 0x30
            return isPEM || isDER ? nil : "the file '\(shown)' is not a public key in PEM or DER"
        }
    }
}
