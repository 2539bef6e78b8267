// xhr: curl's conventions over CurlXHR's HttpRequest, and `xhr demo`, a tour of the library
// against a server embedded in the process.
import ArgumentParser

@main
struct XHR: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xhr",
        abstract: "Fetch a URL with CurlXHR's HttpRequest, with the options a curl user knows.",
        discussion: """
        `xhr URL` runs a request (the default subcommand, `xhr fetch`); `xhr demo` walks through \
        what the library does against a server inside the process, with no network.
        """,
        subcommands: [Fetch.self, Demo.self],
        defaultSubcommand: Fetch.self
    )
}
