// swift-tools-version: 6.1
// The CurlXHR (HttpRequest, and the HttpClient layer), URLSession and xhr-in-swift benchmark clients, and
// CurlXHR's memory benchmark. A package of its own that uses the root package by path, so the
// library never depends on anything here.
import PackageDescription

let package = Package(
    name: "CurlXHRBenchClients",
    dependencies: [
        .package(name: "CurlXHR", path: "../.."),
        .package(path: "../BenchSupport"),
    ],
    targets: [
        .executableTarget(
            name: "curlxhr-bench",
            dependencies: [
                .product(name: "CurlXHR", package: "CurlXHR"),
                .product(name: "BenchSupport", package: "BenchSupport"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The client layer (CurlXHRClient's HttpClient.invoke): a JSON array fetched and decoded
        // (the json-* workloads).
        .executableTarget(
            name: "curlxhr-client-bench",
            dependencies: [
                .product(name: "CurlXHR", package: "CurlXHR"),
                .product(name: "CurlXHRClient", package: "CurlXHR"),
                .product(name: "BenchSupport", package: "BenchSupport"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The memory benchmark: RSS growth over small synchronous GETs. Imports CurlXHR and
        // Glibc only (no Foundation, no BenchSupport), so the process holds what the library
        // brings and little else.
        .executableTarget(
            name: "curlxhr-memory",
            dependencies: [
                .product(name: "CurlXHR", package: "CurlXHR"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // curl-bench's xhr mode in Swift (xhr-in-swift): the same least duties of an XHR-style
        // request, written directly over libcurl, with no library between.
        .systemLibrary(name: "CCurlBench", path: "Sources/CCurlBench"),
        .executableTarget(
            name: "xhr-in-swift",
            dependencies: [
                "CCurlBench",
                .product(name: "BenchSupport", package: "BenchSupport"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "urlsession-bench",
            dependencies: [
                .product(name: "BenchSupport", package: "BenchSupport"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
