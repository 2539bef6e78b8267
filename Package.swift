// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "CurlXHR",
    products: [
        .library(name: "CurlXHR", targets: ["CurlXHR"]),
        // HttpClient: HTTP-RPC's invoke, serializers and middleware over HttpRequest.
        .library(name: "CurlXHRClient", targets: ["CurlXHRClient"]),
        // CurlXHRTransport: a swift-openapi-runtime ClientTransport, so generated clients run on CurlXHR.
        .library(name: "CurlXHROpenAPI", targets: ["CurlXHROpenAPI"]),
        // libcurlxhr.so: the C interface of curlxhr.h.
        .library(name: "curlxhr", type: .dynamic, targets: ["CurlXHRCAPI"]),
        .executable(name: "xhr", targets: ["xhr"]),
    ],
    // The server-side Swift conventions of the client layer, each opt-in: a package that does
    // not enable one builds none of its package (and the xhr tool and libcurlxhr.so, built
    // from this package with no trait, carry none of them). Enable them where CurlXHR is a
    // dependency: `.package(url: …, from: …, traits: ["Logging", "Tracing", "Metrics"])`;
    // here, `swift build --traits Logging,Tracing,Metrics` (scripts/test.sh and docs.sh do).
    traits: [
        .trait(name: "Logging", description: "HttpClient logs each call and its events to a swift-log Logger"),
        .trait(name: "Tracing", description: "HttpClient makes a swift-distributed-tracing client span per call and injects its context"),
        .trait(name: "Metrics", description: "HttpClient counts and times its calls with swift-metrics"),
    ],
    // For the xhr tool only: the embedded server of `xhr demo` (swift-nio); and the
    // DocC plugin (`swift package generate-documentation`, scripts/docs.sh); and the OpenAPI
    // runtime for CurlXHROpenAPI; swift-http-types (itself dependent on nothing) for HTTPFields,
    // the header field type of the public API; swift-log, swift-distributed-tracing and
    // swift-metrics for CurlXHRClient's traits only. The other library targets depend on no
    // package.
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // For CurlXHROpenAPI only.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.8.0"),
        // HTTPFields: CurlXHR's public header field type, and CurlXHROpenAPI's.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // For CurlXHRClient with the Logging trait only: Logger, the ecosystem's logging API.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // For CurlXHRClient with the Tracing trait only: spans, the task's ServiceContext and
        // the instrument that injects W3C `traceparent`.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        // For CurlXHRClient with the Metrics trait only: counters, timers and gauges.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.7.0"),
    ],
    targets: [
        // The small C shim over libcurl and libkrb5: typed setopt/getinfo wrappers, the
        // constants Swift cannot import (function-like macros such as CURLAUTH_*), the
        // header-line recorder libcurl calls for every header line, the futex word the library's
        // threads sleep on (a system call Swift cannot make: syscall is variadic), the Kerberos
        // ticket code, the public suffix list (libpsl) for cookies set through the API, the
        // check of an HTTPS proxy's key against its pins (OpenSSL, libcurl's own TLS library:
        // libcurl 7.88 never checks CURLOPT_PROXY_PINNEDPUBLICKEY), and PAC's FindProxyForURL
        // through libpacparser (loaded with dlopen when the first PAC file is used: a program
        // without PAC never maps it; its header types the calls).
        .target(
            name: "CCurlShim",
            path: "CSupport/CCurlShim",
            linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("krb5"), .linkedLibrary("gssapi_krb5"), .linkedLibrary("psl"),
                             .linkedLibrary("ssl"), .linkedLibrary("crypto"), .linkedLibrary("dl")]
        ),
        // SQLite (the system's libsqlite3), the HTTP cache's index, loaded when the first cache
        // opens (dlopen: a program without a cache never maps it); SQLITE_TRANSIENT, a macro
        // Swift cannot import, as a binding function.
        .target(
            name: "CSQLite",
            path: "CSupport/CSQLite",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // The response body's decoding stage: zlib (gzip, deflate), brotli and zstd behind one
        // streaming step (the stage itself, and when it runs, is Swift's).
        .target(
            name: "CDecode",
            path: "CSupport/CDecode",
            linkerSettings: [.linkedLibrary("z"), .linkedLibrary("brotlidec"), .linkedLibrary("zstd")]
        ),
        // HTTPTypes: HTTPFields, the ecosystem's type for header fields, in the public API.
        .target(
            name: "CurlXHR",
            dependencies: ["CCurlShim", "CSQLite", "CDecode", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The client layer: base URL, arguments encoded by HTTP-RPC's rules, responses decoded
        // by their content type, middleware; only through CurlXHR's HttpRequest. swift-log,
        // swift-distributed-tracing and swift-metrics only with their traits.
        .target(
            name: "CurlXHRClient",
            dependencies: [
                "CurlXHR", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The OpenAPI transport: swift-openapi-runtime's ClientTransport over HttpRequest's
        // async API, in a target of its own so that CurlXHR stays dependency-free.
        .target(
            name: "CurlXHROpenAPI",
            dependencies: [
                "CurlXHR",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The hand-written C header; its functions are implemented in CurlXHRCAPI.
        .target(
            name: "CurlXHRHeader",
            path: "CSupport/CurlXHRHeader"
        ),
        .target(
            name: "CurlXHRCAPI",
            dependencies: ["CurlXHR", "CurlXHRClient", "CurlXHRHeader"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // MD5 from OpenSSL's libcrypto (libssl-dev comes with libcurl4-openssl-dev) for the
        // Digest check of the demo's server.
        .target(
            name: "CDigestMD5",
            path: "CSupport/CDigestMD5",
            linkerSettings: [.linkedLibrary("crypto")]
        ),
        // The command-line tool: curl's conventions over HttpRequest, and `xhr demo`.
        .executableTarget(
            name: "xhr",
            dependencies: [
                "CurlXHR",
                "CurlXHRClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "CDigestMD5",
            ],
            swiftSettings: [.swiftLanguageMode(.v6)],
            // A release xhr carries the Swift runtime and FoundationEssentials inside it: at
            // every start the dynamic loader then maps and binds a dozen libraries fewer
            // (Benchmarks/startup.sh). lld: gold warns about mktemp in Foundation's archive.
            // --no-export-dynamic: the runtime's static arguments export every symbol, which
            // makes each library's symbol lookups at start-up search a table of 11,000 names;
            // pack-relative-relocs: the 50,000 relative relocations as a 10 KB table instead of
            // 1.2 MB the loader reads at every start (DT_RELR, glibc 2.36: Debian 12).
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-use-ld=lld", "-l_FoundationCollections", "-l_FoundationCShims",
                                                         "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
                                          .when(configuration: .release))]
        ),
        // The Swift examples (examples/swift), built with everything and run by the tests.
        .executableTarget(name: "example-workers", dependencies: ["CurlXHR"], path: "examples/swift/workers",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "example-delegate", dependencies: ["CurlXHR"], path: "examples/swift/delegate",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "example-await", dependencies: ["CurlXHR"], path: "examples/swift/await",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "example-client", dependencies: ["CurlXHRClient"], path: "examples/swift/client",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        // Runs one big transfer in a process of its own, for the memory tests.
        .executableTarget(
            name: "curlxhr-probe",
            dependencies: ["CurlXHR"],
            path: "Tests/Probe",
            swiftSettings: [.swiftLanguageMode(.v6)],
            // It reads a cache's index itself, to check it as SQLite sees it.
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .testTarget(
            name: "CurlXHRTests",
            dependencies: ["CurlXHR", "CurlXHRClient", "curlxhr-probe", "xhr",
                           "CurlXHROpenAPI", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                           .product(name: "HTTPTypes", package: "swift-http-types"),
                           "example-workers", "example-delegate", "example-await", "example-client",
                           // The test handlers of the client layer's traits: a recording log
                           // handler, tracer and metrics factory.
                           .product(name: "InMemoryLogging", package: "swift-log", condition: .when(traits: ["Logging"])),
                           .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                           .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"]))],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
