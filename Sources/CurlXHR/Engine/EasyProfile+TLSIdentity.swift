import CCurlShim

extension EasyProfile.Fields {
    /// The client certificate and the pinned public keys of the server connection.
    func applyTLSIdentity(_ options: inout EasyOptions) {
        if let identity = switches.clientIdentity {
            identity.apply(&options, certificate: CURLOPT_SSLCERT, blob: CURLOPT_SSLCERT_BLOB, type: CURLOPT_SSLCERTTYPE,
                           key: CURLOPT_SSLKEY, keyType: CURLOPT_SSLKEYTYPE, password: CURLOPT_KEYPASSWD)
        }
        if let pins = switches.pinnedPublicKeys { options.set(CURLOPT_PINNEDPUBLICKEY, pins) }
    }
}

extension ClientIdentity {
    /// Sets the identity with the options of one side of the connection (the server's here;
    /// a TLS proxy has its own).
    func apply(_ options: inout EasyOptions, certificate: CURLoption, blob: CURLoption, type: CURLoption,
               key: CURLoption, keyType: CURLoption, password passwordOption: CURLoption) {
        switch source {
        case .file(let path):
            options.set(certificate, path)
        case .pkcs12(let data):
            // CURL_BLOB_COPY: libcurl keeps its own copy, so the bytes need not outlive this call.
            data.withUnsafeBytes { bytes in
                var value = curl_blob(data: UnsafeMutableRawPointer(mutating: bytes.baseAddress), len: bytes.count,
                                      flags: UInt32(CURL_BLOB_COPY))
                withUnsafeMutablePointer(to: &value) { options.set(blob, pointer: UnsafeMutableRawPointer($0)) }
            }
        }
        options.set(type, format.rawValue)
        if let keyPath {
            options.set(key, keyPath)
            options.set(keyType, keyFormat.rawValue)
        }
        options.set(passwordOption, password)
    }
}
