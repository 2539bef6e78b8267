// swift-tools-version: 6.1
// What every Swift benchmark client shares: the command line, the request tally with its
// count and time bounds, worker threads, resource usage and the one-line JSON result.
import PackageDescription

let package = Package(
    name: "BenchSupport",
    products: [
        .library(name: "BenchSupport", targets: ["BenchSupport"]),
    ],
    targets: [
        .target(name: "BenchSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
