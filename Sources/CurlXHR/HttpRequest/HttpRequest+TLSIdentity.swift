#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The request's identity to a TLS server, and the server keys it accepts.
extension HttpRequest {
    /// How a certificate (and its key) is stored (C `cxhr_cert_format`; xhr `--cert-type`).
    public enum CertificateFormat: String, Sendable, CaseIterable {
        /// Base64 text between `-----BEGIN …-----` lines; may hold the key too.
        case pem = "PEM"
        /// Binary ASN.1.
        case der = "DER"
        /// A PKCS#12 bundle (`.p12`, `.pfx`): the certificate and its key, usually under a password.
        case pkcs12 = "P12"
    }

    /// Shows the certificate at `path` to a server that asks for one (TLS client
    /// authentication; curl's `--cert`, `--cert-type`, `--key` and `--pass`; libcurl's
    /// `CURLOPT_SSLCERT`). The key is in `keyPath`, in the certificate's format, or with a PEM
    /// certificate in the same file; a PKCS#12 file holds both. `password` unlocks an
    /// encrypted key or a PKCS#12 file. Without one an encrypted key is refused, never asked
    /// for on a terminal.
    ///
    /// A wrong password, or a file that is not what `format` says, ends the send in DONE with
    /// status 0, ``getFailureKind()`` `.tls` and libcurl's text naming the file (curl's exit
    /// 58). A server that does not trust the certificate answers as it chooses (nginx with
    /// 400) or ends the handshake (`.tls`). A connection made with a certificate is lent only
    /// to requests showing the same one (the same path, or the same bytes); its key and
    /// password are read when a connection is made. A request with a client certificate takes
    /// no part in the HTTP cache: its answers are the certificate's alone.
    /// - Returns: `false` with ``lastError`` when a path is empty, holds CR, LF or NUL, or
    ///   names no readable regular file; a PKCS#12 file comes with a `keyPath`; the password
    ///   holds NUL; or the request is in flight.
    @discardableResult
    public func setClientCertificate(_ path: String, format: CertificateFormat = .pem,
                                     keyPath: String? = nil, password: String? = nil) -> Bool {
        setClientCertificate(path, format: format, keyPath: keyPath, keyFormat: nil, password: password)
    }

    /// ``setClientCertificate(_:format:keyPath:password:)`` with a key in a format of its own
    /// (xhr's `--key-type`).
    package func setClientCertificate(_ path: String, format: CertificateFormat, keyPath: String?,
                                      keyFormat: CertificateFormat?, password: String?) -> Bool {
        setIdentity(\.clientIdentity, path, format: format, keyPath: keyPath, keyFormat: keyFormat, password: password)
    }

    /// Reads the identity in the files at `path` (and `keyPath`) into the switch at `slot`
    /// (the server's or the proxy's), or refuses it with the reason.
    func setIdentity(_ slot: WritableKeyPath<TransferSwitches, ClientIdentity?>, _ path: String, format: CertificateFormat,
                     keyPath: String?, keyFormat: CertificateFormat?, password: String?) -> Bool {
        switch ClientIdentity.files(path, format: format, keyPath: keyPath, keyFormat: keyFormat, password: password) {
        case .failure(let problem): refuse(.fileUnreadable, problem.message)
        case .success(let identity): changeSwitches { $0[keyPath: slot] = identity }
        }
    }

    /// Shows the certificate of a PKCS#12 bundle held in memory (as BlackBerry Dynamics hands
    /// them out; libcurl's `CURLOPT_SSLCERT_BLOB`), unlocked with `password`. The bytes are
    /// copied. Failures are as ``setClientCertificate(_:format:keyPath:password:)``'s.
    /// - Returns: `false` with ``lastError`` when `data` is empty or not DER, the password
    ///   holds NUL, or the request is in flight.
    @discardableResult
    public func setClientCertificate(pkcs12 data: Data, password: String? = nil) -> Bool {
        setClientCertificate(pkcs12Bytes: Array(data), password: password)
    }

    /// ``setClientCertificate(pkcs12:password:)`` with the bytes as an array (C's copy of them).
    package func setClientCertificate(pkcs12Bytes data: [UInt8], password: String?) -> Bool {
        switch ClientIdentity.pkcs12(data, password: password) {
        case .failure(let problem): refuse(.invalidArgument, problem.message)
        case .success(let identity): changeSwitches { $0.clientIdentity = identity }
        }
    }

    /// Accepts a server only if its certificate's public key is one of `pins` (curl's
    /// `--pinnedpubkey`, libcurl's `CURLOPT_PINNEDPUBLICKEY`): `sha256//BASE64` hashes of the
    /// key (its DER SubjectPublicKeyInfo), separated by `;`, or the path of the public key
    /// itself in PEM or DER. The certificate is still verified as always. `""` removes the pins.
    ///
    /// Another key ends the send in DONE with status 0, ``getFailureKind()`` `.tls` and
    /// libcurl's text "SSL: public key does not match pinned public key" (curl's exit 90).
    /// To compute a pin: `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin
    /// -outform der | openssl dgst -sha256 -binary | base64`.
    /// - Returns: `false` with ``lastError`` for a hash that is not the base64 of 32 bytes,
    ///   a file that cannot be read or is not a key, CR, LF or NUL, or a request in flight.
    @discardableResult
    public func setPinnedPublicKeys(_ pins: String) -> Bool {
        if pins.isEmpty { return changeSwitches { $0.pinnedPublicKeys = nil } }
        if let problem = PublicKeyPins.problem(pins) { return refuse(.invalidArgument, problem) }
        return changeSwitches { $0.pinnedPublicKeys = pins }
    }
}
