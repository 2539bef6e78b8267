// xhr: curl's conventions over CurlXHR's HttpRequest, and `xhr demo`, a tour of the library
// against a server embedded in the process.
#if canImport(Glibc)
import Glibc
#endif

@main
enum XHR {
    static let overview = """
        USAGE: xhr [fetch] [<options>] <url> ...
               xhr demo

        Fetch a URL with CurlXHR's HttpRequest, with the options a curl user knows. `xhr URL` \
        runs a request (the default subcommand, `xhr fetch`); `xhr demo` walks through what the \
        library does against a server inside the process, with no network.
        """

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let code: Int32
        if arguments.first == "demo" {
            code = run { try Demo().run() }
        } else {
            if arguments.first == "fetch" { arguments.removeFirst() }
            code = run { try Fetch.main(arguments) }
        }
        exit(code)
    }

    /// Runs `work`, and the exit status it ends with: a usage error is curl's 2, with its
    /// message and curl's hint on standard error.
    private static func run(_ work: () throws -> Void) -> Int32 {
        do {
            try work()
            return 0
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch let error as ValidationError {
            return usage(error)
        } catch let unknown as UnknownOption {
            return usage(unknown.asUsageError)
        } catch {
            StandardStreams.write("xhr: \(error)\n", to: 2)
            return 1
        }
    }

    private static func usage(_ error: ValidationError) -> Int32 {
        StandardStreams.write("xhr: \(error.message)\nxhr: try 'xhr --help' for more information\n", to: 2)
        return error.code
    }
}
