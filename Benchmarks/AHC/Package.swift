// swift-tools-version: 6.1
// The AsyncHTTPClient benchmark client, in a package of its own so that neither the library
// nor the CurlXHR clients ever depend on it (building it means SwiftNIO and BoringSSL).
import PackageDescription

let package = Package(
    name: "AHCBench",
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        .package(path: "../BenchSupport"),
    ],
    targets: [
        .executableTarget(
            name: "ahc-bench",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "BenchSupport", package: "BenchSupport"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
