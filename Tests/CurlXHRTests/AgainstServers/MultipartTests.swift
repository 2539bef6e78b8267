@testable import CurlXHR
import Foundation
import Testing

/// `addPostFile`: `multipart/form-data` built with libcurl's MIME API, files streamed from
/// disk, checked part by part by the fault server's `/multipart` (name, file name, type, size,
/// SHA-256 of each part as it arrived).
@Suite(.ownThreads) struct MultipartTests {
    let env: TestEnvironment
    init() throws { env = try TestEnvironment.get() }

    func parts(_ body: Data) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        return try #require(object?["parts"] as? [[String: Any]], "\(String(decoding: body, as: UTF8.self))")
    }

    func write(_ data: Data, named name: String) throws -> String {
        let directory = try env.scratchPath("multipart")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func sha256(_ path: String) throws -> String {
        let result = try Shell.run("/usr/bin/sha256sum", [path])
        return String(result.output.prefix(64))
    }

    @Test(arguments: [false, true])
    func valuesAndFilesArriveAsParts(async: Bool) throws {
        let text = try write(Data("hello, form\n".utf8), named: "note.txt")
        let binary = try write(Pattern.bytes(300_000), named: "data.bin")
        let url = try env.faultURL + "/multipart"
        let configure: (HttpRequest) -> Void = {
            $0.setPostValue("1", forKey: "a")
            $0.setPostValue("x y&z", forKey: "b")
            #expect($0.addPostFile(text, forKey: "note"))
            #expect($0.addPostFile(binary, forKey: "blob", fileName: "renamed.bin", contentType: "application/x-test"))
        }
        let (request, body) = async ? { let (r, seen) = fetchAsync("POST", url, configure: configure); return (r, seen.body) }()
                                    : fetchSync("POST", url, configure: configure)
        #expect(request.getStatus() == 200, "\(String(decoding: body, as: UTF8.self))")
        let parts = try parts(body)
        #expect(parts.map { $0["name"] as? String } == ["a", "b", "note", "blob"], "values first, then files in order")
        #expect(parts[1]["size"] as? Int == 5)
        #expect(parts[2]["filename"] as? String == "note.txt")
        #expect(parts[2]["contentType"] as? String == "text/plain", "guessed from the extension")
        #expect(parts[2]["sha256"] as? String == (try Self.sha256(text)))
        #expect(parts[3]["filename"] as? String == "renamed.bin")
        #expect(parts[3]["contentType"] as? String == "application/x-test")
        #expect(parts[3]["size"] as? Int == 300_000)
        #expect(parts[3]["sha256"] as? String == (try Self.sha256(binary)))
        #expect(request.getBytesSent() > 300_000)
    }

    @Test func withoutFilesTheFormStaysURLEncoded() throws {
        let (_, body) = fetchSync("POST", try env.faultURL + "/record") { $0.setPostValue("1", forKey: "a") }
        let echo = try Echo(body)
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
        let (_, multipart) = fetchSync("POST", try env.faultURL + "/record") {
            $0.setPostValue("1", forKey: "a")
            _ = $0.addPostFile(try! write(Data("f".utf8), named: "f.txt"), forKey: "f")
        }
        #expect(try Echo(multipart).header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
    }

    @Test func missingFilesAreRefusedBeforeAnythingIsSent() throws {
        let request = HttpRequest()
        #expect(!request.addPostFile("/nonexistent/file.bin", forKey: "f"), "not OPENED, and missing")
        #expect(request.open("POST", url: try env.faultURL + "/multipart"))
        #expect(!request.addPostFile("/nonexistent/file.bin", forKey: "f"))
        #expect(request.lastError?.code == .fileUnreadable)
        #expect(!request.addPostFile("/tmp", forKey: "f"), "a folder")
        #expect(!request.addPostFile(try write(Data("x".utf8), named: "ok.txt"), forKey: "bad\r\nkey"))
        let vanishing = try write(Data("soon gone".utf8), named: "gone.txt")
        #expect(request.addPostFile(vanishing, forKey: "f"))
        try FileManager.default.removeItem(atPath: vanishing)
        #expect(!request.send(), "the file went away before the send")
        #expect(request.lastError?.code == .fileUnreadable)
        #expect(request.getState() == .opened)
        #expect(request.sendData(Data("x".utf8)) == false, "a body and a form")
        #expect(request.lastError?.message.contains("form values") == true, "\(request.lastError?.message ?? "")")
        request.clearPostValues()
        #expect(request.send())
        #expect(request.getStatus() == 400, "no form at all: the server says so")
    }

    @Test func twoFiftyMiBFilesStreamWithoutTheirSizeInMemory() throws {
        let size = 50 * 1024 * 1024
        let directory = try env.scratchPath("multipart-large")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var paths: [String] = []
        for index in 0..<2 {
            let path = directory + "/file\(index).bin"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            var chunk = Data(count: 1 << 20)
            for block in 0..<(size >> 20) {
                chunk.withUnsafeMutableBytes { bytes in for i in stride(from: 0, to: bytes.count, by: 4096) { bytes[i] = UInt8((block + i + index) & 0xff) } }
                try handle.write(contentsOf: chunk)
            }
            try handle.close()
            paths.append(path)
        }
        let result = try Shell.run(TestEnvironment.builtProduct("curlxhr-probe"), ["multipart", try env.faultURL + "/multipart"] + paths)
        #expect(result.status == 0, "\(result.output)")
        let line = try #require(result.output.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(report["status"] as? Int == 200, "\(report)")
        let parts = try parts(Data((report["response"] as? String ?? "").utf8))
        #expect(parts.count == 2)
        for (index, part) in parts.enumerated() where index < 2 {
            #expect(part["size"] as? Int == size)
            #expect(part["sha256"] as? String == (try Self.sha256(paths[index])), "part \(index)")
        }
        let growth = (report["peak_kib"] as? Int ?? .max) - (report["baseline_kib"] as? Int ?? 0)
        #expect(growth < 16 * 1024, "peak memory grew by \(growth) KiB")
    }
}
