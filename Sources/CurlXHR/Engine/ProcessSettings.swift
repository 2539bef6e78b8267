import CCurlShim
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process-wide opt-in to the proxy environment variables.
enum ProxyEnvironment {
    static let enabled = Locked(false)
}

/// The process-wide connection limits (``HttpRequest/setConnectionLimits(total:perHost:)``):
/// libcurl's `CURLMOPT_MAX_TOTAL_CONNECTIONS` and `CURLMOPT_MAX_HOST_CONNECTIONS`, 0 for none.
struct ConnectionLimits: Equatable, Sendable {
    var total = 0
    var perHost = 0

    static let configured = Locked(ConnectionLimits())
}

/// The process-wide choice of trusted CAs.
enum TrustedCertificates {
    static let configuredFile = Locked<String?>(nil)

    /// `HttpRequest.caCertificateFile`, else `CURL_CA_BUNDLE`, else `SSL_CERT_FILE` (in the curl
    /// tool's order; libcurl reads neither variable itself), else `nil` for the system store.
    static var processWideFile: String? {
        configuredFile.withLock { $0 } ?? environmentFile
    }

    /// The variables as they were at the first request: the environment is read once per
    /// process, not on every request.
    private static let environmentFile: String? = {
        for name in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            if let value = getenv(name), value.pointee != 0 { return String(cString: value) }
        }
        return nil
    }()
}

/// The process-wide settings that shape transfers. The engine reads them again only after a
/// change (`changed()`, called by every setter), not for every transfer. A class, so that
/// each transfer takes them as one reference.
final class ProcessSettings {
    /// Trusted CAs for requests that set none (`HttpRequest.caCertificateFile` or the
    /// environment), or nil for the system store.
    let caFile: String?
    /// Requests without a proxy of their own may use the proxy environment variables.
    let environmentProxy: Bool
    /// Kerberos tickets may be delegated to the server.
    let allowDelegation: Bool
    /// How many connections the engine may open at once.
    let connectionLimits: ConnectionLimits
    /// The credential cache GSS-API should use ("" for the user's default one). Looked up
    /// (through libkrb5) only when a transfer needs it: a program that meets no Negotiate
    /// challenge never loads Kerberos state, which its exit would tear down under the engine.
    private(set) lazy var credentialCache: String = KerberosCredentials.activeCacheFile ?? ""

    /// Counts changes to the settings.
    static let version = Atomic<Int>(0)

    /// Marks the settings changed; call after the change is stored.
    static func changed() {
        version.add(1, ordering: .releasing)
    }

    /// The settings as they are now.
    convenience init() {
        self.init(caFile: TrustedCertificates.processWideFile, environmentProxy: ProxyEnvironment.enabled.withLock { $0 },
                  allowDelegation: KerberosCredentials.allowDelegation,
                  connectionLimits: ConnectionLimits.configured.withLock { $0 })
    }

    init(caFile: String?, environmentProxy: Bool, allowDelegation: Bool,
         connectionLimits: ConnectionLimits = ConnectionLimits(), credentialCache: String? = nil) {
        self.caFile = caFile
        self.environmentProxy = environmentProxy
        self.allowDelegation = allowDelegation
        self.connectionLimits = connectionLimits
        if let credentialCache { self.credentialCache = credentialCache }
    }
}
