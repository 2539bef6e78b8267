import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc  // ENOENT
#endif

/// Tokens kept in a file across runs: JSON naming the token endpoint and client they are for,
/// mode 0600, replaced atomically (a temporary file beside it, synced, renamed), under a lock
/// file shared with other processes using it.
struct TokenFile: Sendable {
    let path: String
    let tokenURL: String
    let clientID: String

    private struct Content: Codable {
        let token_url: String
        let client_id: String
        let token: OAuth2Token
    }

    /// The token kept for this endpoint and client; `nil` when there is none, or the file is
    /// for another client or cannot be read (said on standard error: the next token replaces it).
    func load() -> OAuth2Token? {
        PrivateFiles.withLock(on: path) {
            let bytes: [UInt8]
            do throws(PrivateFiles.Failure) {
                bytes = try PrivateFiles.contents(of: path)
            } catch {
                if error.code != ENOENT { Self.log("cannot read the token file \(path): \(error)") }
                return nil
            }
            guard let content = try? JSONDecoder().decode(Content.self, from: Data(bytes)) else {
                Self.log("the token file \(path) is not one CurlXHR wrote; it is ignored and will be replaced")
                return nil
            }
            guard content.token_url == tokenURL, content.client_id == clientID else { return nil }
            return content.token
        }
    }

    /// Keeps `token` (replacing the file) or, for `nil`, removes the file.
    func save(_ token: OAuth2Token?) {
        PrivateFiles.withLock(on: path) {
            do {
                if let token {
                    let content = Content(token_url: tokenURL, client_id: clientID, token: token)
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    try PrivateFiles.replace(path, with: Array(try encoder.encode(content)))
                } else {
                    try PrivateFiles.remove(path)
                }
            } catch let error as PrivateFiles.Failure {
                Self.log("could not \(token == nil ? "remove" : "write") the token file \(path): \(error)")
            } catch {
                Self.log("could not encode the token for \(path): \(error)")
            }
        }
    }

    private static func log(_ text: String) { PrivateFiles.log(text) }
}
