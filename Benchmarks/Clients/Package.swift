// swift-tools-version: 6.1
// The CurlXHR and URLSession benchmark clients. A package of its own that uses the root
// package by path, so the library never depends on anything here.
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
        .executableTarget(
            name: "urlsession-bench",
            dependencies: [
                .product(name: "BenchSupport", package: "BenchSupport"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
