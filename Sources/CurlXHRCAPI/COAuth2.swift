import CurlXHRHeader
import CurlXHR
import CurlXHRClient
#if canImport(Glibc)
import Glibc
#endif

/// The authorizers behind `cxhr_oauth2 *` handles.
enum COAuth2 {
    static let registry = HandleRegistry<OAuth2Authorizer>()

    /// The configuration a C struct describes; nil when it lacks what its grant needs.
    static func configuration(_ config: cxhr_oauth2_config) -> OAuth2Configuration? {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        guard let tokenURL = text(config.token_url), let clientID = text(config.client_id) else { return nil }
        let grant: OAuth2Configuration.Grant
        switch config.grant {
        case CXHR_OAUTH2_CLIENT_CREDENTIALS:
            grant = .clientCredentials
        case CXHR_OAUTH2_PASSWORD:
            guard let username = text(config.username), let password = text(config.password) else { return nil }
            grant = .password(username: username, password: password)
        case CXHR_OAUTH2_REFRESH_TOKEN:
            guard let refresh = text(config.refresh_token) else { return nil }
            grant = .refreshToken(refresh)
        default:
            return nil
        }
        return OAuth2Configuration(tokenURL: tokenURL, clientID: clientID, clientSecret: text(config.client_secret),
                                   clientAuthentication: config.secret_in_form ? .formFields : .basic, grant: grant,
                                   scope: text(config.scope), storage: text(config.token_file).map { .file($0) } ?? .memory,
                                   revocationURL: text(config.revocation_url),
                                   endpointTimeout: config.timeout_s > 0 && config.timeout_s.isFinite ? config.timeout_s : 30)
    }

    static func result(of error: OAuth2Error) -> cxhr_oauth2_result {
        switch error {
        case .rejected: CXHR_OAUTH2_REJECTED
        case .tokenEndpoint, .cancelled: CXHR_OAUTH2_UNREACHABLE
        case .noGrant: CXHR_OAUTH2_NO_GRANT
        case .loggedOut: CXHR_OAUTH2_LOGGED_OUT
        }
    }
}

@c @implementation
public func cxhr_oauth2_create(_ config: UnsafePointer<cxhr_oauth2_config>?) -> OpaquePointer? {
    guard let config, let configuration = COAuth2.configuration(config.pointee) else { return nil }
    let caFile = config.pointee.ca_file.map { String(cString: $0) }
    var handle: OpaquePointer?
    _ = COAuth2.registry.register { made in
        handle = made
        return OAuth2Authorizer(configuration) { request in
            if let caFile { request.setCACertificateFile(caFile) }
        }
    }
    return handle
}

@c @implementation
public func cxhr_oauth2_destroy(_ handle: OpaquePointer?) {
    _ = COAuth2.registry.unregister(handle)
}

@c @implementation
public func cxhr_oauth2_authorize(_ handle: OpaquePointer?, _ requestHandle: OpaquePointer?, _ refused: Bool) -> cxhr_oauth2_result {
    guard let request = CRequest.find(requestHandle) else { return CXHR_OAUTH2_INVALID }
    guard let authorizer = COAuth2.registry.find(handle) else {
        _ = request.refuse(handle == nil ? "the authorizer is NULL" : "the authorizer was destroyed")
        return CXHR_OAUTH2_INVALID
    }
    guard request.request.getState() == .opened else {
        _ = request.refuse("the request is not OPENED", code: .invalidState)
        return CXHR_OAUTH2_INVALID
    }
    let refusedToken = refused ? request.bearerToken.withLock { $0 } : nil
    let outcome: Result<String, OAuth2Error> = Blocking.run {
        do throws(OAuth2Error) {
            if let refusedToken { return .success(try await authorizer.accessToken(refusing: refusedToken)) }
            return .success(try await authorizer.accessToken())
        } catch {
            return .failure(error)
        }
    }
    switch outcome {
    case .success(let token):
        guard request.call({ $0.setRequestHeader("Authorization", value: "Bearer \(token)") }) else { return CXHR_OAUTH2_INVALID }
        request.bearerToken.withLock { $0 = token }
        return CXHR_OAUTH2_OK
    case .failure(let error):
        _ = request.refuse("no OAuth2 token: \(error)", code: .transferFailed)  // CXHR_ERROR_OTHER
        return COAuth2.result(of: error)
    }
}

@c @implementation
public func cxhr_oauth2_logout(_ handle: OpaquePointer?) -> cxhr_oauth2_result {
    guard let authorizer = COAuth2.registry.find(handle) else { return CXHR_OAUTH2_INVALID }
    let outcome: OAuth2Error? = Blocking.run {
        do throws(OAuth2Error) {
            try await authorizer.logout()
            return nil
        } catch {
            return error
        }
    }
    return outcome.map(COAuth2.result(of:)) ?? CXHR_OAUTH2_OK
}
