// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "CurlXHR",
    products: [
        .library(name: "CurlXHR", targets: ["CurlXHR"]),
        // libcurlxhr.so: the C interface of curlxhr.h.
        .library(name: "curlxhr", type: .dynamic, targets: ["CurlXHRC"]),
        .executable(name: "xhr-example", targets: ["xhr-example"]),
    ],
    targets: [
        // The small C shim over libcurl and libkrb5: typed setopt/getinfo wrappers, the
        // constants Swift cannot import (function-like macros such as CURLAUTH_*), and the
        // Kerberos ticket code.
        .target(
            name: "CCurlShim",
            path: "CSupport/CCurlShim",
            linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("krb5"), .linkedLibrary("gssapi_krb5")]
        ),
        .target(
            name: "CurlXHR",
            dependencies: ["CCurlShim"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The hand-written C header; its functions are implemented in CurlXHRC.
        .target(
            name: "CCurlXHR",
            path: "CSupport/CCurlXHR"
        ),
        .target(
            name: "CurlXHRC",
            dependencies: ["CurlXHR", "CCurlXHR"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "xhr-example",
            dependencies: ["CurlXHR"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Runs one big transfer in a process of its own, for the memory tests.
        .executableTarget(
            name: "curlxhr-probe",
            dependencies: ["CurlXHR"],
            path: "Tests/Probe",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "CurlXHRTests",
            dependencies: ["CurlXHR", "curlxhr-probe", "xhr-example"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
