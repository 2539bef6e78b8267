import CurlXHR
import CurlXHRClient
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The OAuth2 options: a bearer token given as it is (curl's --oauth2-bearer), or one got from
/// a token endpoint by the library's OAuth2Authorizer, kept in a file across runs.
struct OAuth2Options {
    var bearer: String?
    var tokenURL: String?
    var client: String?
    var user: String?
    var scope: String?
    var tokenFile: String?

    static var section: OptionSection {
        OptionSection(title: "OAuth2", options: [
            .text(nil, "oauth2-bearer", "TOKEN", "Send 'Authorization: Bearer TOKEN'.", { $0.oauth2.bearer = $1 }),
            .text(nil, "oauth2-token-url", "URL", "Get a bearer token from this OAuth2 token endpoint (client credentials, or the password grant "
                  + "with --oauth2-user), renewed when it is due and once after a 401 with a Bearer challenge.", { $0.oauth2.tokenURL = $1 }),
            .text(nil, "oauth2-client", "ID[:SECRET]", "The OAuth2 client ID and secret (sent with Basic).", { $0.oauth2.client = $1 }),
            .text(nil, "oauth2-user", "USER:PASSWORD", "The resource owner for the password grant.", { $0.oauth2.user = $1 }),
            .text(nil, "oauth2-scope", "SCOPE", "The scope to ask for.", { $0.oauth2.scope = $1 }),
            .text(nil, "oauth2-token-file", "FILE", "Keep the tokens in FILE (mode 0600): the next run uses them without a new grant.", { $0.oauth2.tokenFile = $1 }),
        ])
    }

    func validate() throws {
        if bearer != nil, tokenURL != nil { throw ValidationError("use one of --oauth2-bearer and --oauth2-token-url") }
        if tokenURL != nil, client == nil { throw ValidationError("--oauth2-token-url needs --oauth2-client ID[:SECRET]") }
        if tokenURL == nil, client != nil || user != nil || scope != nil || tokenFile != nil {
            throw ValidationError("--oauth2-client, --oauth2-user, --oauth2-scope and --oauth2-token-file need --oauth2-token-url")
        }
    }

    /// The authorizer of --oauth2-token-url; its requests trust what the run's requests trust.
    func authorizer(caFile: String?, insecure: Bool) -> OAuth2Authorizer? {
        guard let tokenURL, let client else { return nil }
        let (id, secret) = Fetch.split(client)
        let grant: OAuth2Configuration.Grant = user.map {
            let (name, password) = Fetch.split($0)
            return .password(username: name, password: password)
        } ?? .clientCredentials
        let configuration = OAuth2Configuration(tokenURL: tokenURL, clientID: id, clientSecret: client.contains(":") ? secret : nil,
                                                grant: grant, scope: scope, storage: tokenFile.map { .file($0) } ?? .memory)
        return OAuth2Authorizer(configuration) { request in
            if let caFile { request.setCACertificateFile(caFile) }
            if insecure { request.disablePeerVerification() }
        }
    }

    /// A token from `authorizer` (a new one when `refused` was refused), waiting for it: the
    /// tool's threads are not Swift's cooperative pool.
    static func token(from authorizer: OAuth2Authorizer, refusing refused: String?, console: Console) throws -> String {
        let outcome = Blocking.run { () -> Result<String, OAuth2Error> in
            do throws(OAuth2Error) {
                if let refused { return .success(try await authorizer.accessToken(refusing: refused)) }
                return .success(try await authorizer.accessToken())
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let token): return token
        case .failure(let error): throw console.exit(67, "OAuth2: \(error)")
        }
    }

    /// Whether a response refuses the bearer token it was sent with: a 401 with a Bearer challenge.
    static func refusesBearer(_ request: HttpRequest) -> Bool {
        guard request.getStatus() == 401, let challenges = request.getResponseHeader("WWW-Authenticate") else { return false }
        return OAuth2Authorizer.challengesBearer(challenges)
    }
}
