@testable import CurlXHR
import Foundation
import Testing

/// The transfer's body path (`Transfer+BodyPath.swift`), event by event with the engine played
/// by a script: a 2xx body goes to the response file and the owner only counts it, another
/// body goes to the owner, an abort closes the file at once, and both owners (a request and
/// an `async` response) see the same.
@Suite(.ownThreads) struct BodyPathOverScriptedRunnerTests {
    /// A folder of its own for a response file, removed by the caller.
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "bodypath-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    static func contents(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func a2xxBodyGoesToTheFileAndTheRequestOnlyCountsIt() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let runner = ScriptedRunner()
        let (request, recorder, queue) = RequestOverScriptedRunnerTests.asyncRequest(runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/file", async: true))
        #expect(request.setResponseFile(folder + "/out"))
        #expect(request.send())
        let transfer = try #require(runner.transfer)
        runner.head(transfer, fields: "Content-Length: 10\r\nETag: \"v1\"\r\n")
        #expect(FileManager.default.fileExists(atPath: folder + "/out.part"), "the head opened the .part")
        #expect(runner.body(transfer, "01234") == .accepted)
        #expect(runner.body(transfer, "56789") == .accepted)
        #expect(request.getProgress().bytesReceived == 10, "the request counts what the file took")
        #expect(request.getReceiveBuffer().isEmpty, "the file's bytes never reach the buffer")
        #expect(Self.contents(folder + "/out") == nil, "not the file until the end")
        runner.finish(transfer)
        queue.sync {}
        #expect(recorder.waitForDone())
        #expect(request.getStatus() == 200)
        #expect(Self.contents(folder + "/out") == "0123456789")
        #expect(!FileManager.default.fileExists(atPath: folder + "/out.part"))
        #expect(recorder.result.states.contains(.loading), "LOADING for bytes the file took")
        #expect(recorder.result.body.isEmpty)
    }

    @Test func aBodyOtherThan2xxGoesToTheBufferAndMakesNoFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let runner = ScriptedRunner { runner, transfer in
            runner.head(transfer, status: 404, fields: "Content-Length: 9\r\n")
            runner.body(transfer, "not found")
            runner.finish(transfer)
        }
        let request = HttpRequest(runner: runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/missing"))
        #expect(request.setResponseFile(folder + "/out"))
        #expect(request.send())
        #expect(request.getStatus() == 404)
        #expect(String(decoding: request.getReceiveBuffer(), as: UTF8.self) == "not found")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "no file, no .part")
    }

    /// Once `abort()` returned, no byte reaches the `.part`: a send that resumes it next
    /// reads a size that stays true.
    @Test func anAbortClosesTheFileBeforeItReturns() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let runner = ScriptedRunner(completesStopsAtOnce: false)
        let (request, recorder, queue) = RequestOverScriptedRunnerTests.asyncRequest(runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/big", async: true))
        #expect(request.setResponseFile(folder + "/out", resume: true))
        #expect(request.send())
        let transfer = try #require(runner.transfer)
        runner.head(transfer, fields: "Content-Length: 100\r\nETag: \"v1\"\r\n")
        #expect(runner.body(transfer, "first part") == .accepted)
        #expect(request.abort())
        // News the engine had on its way before it took the cancel.
        #expect(runner.body(transfer, "late") == .refused)
        transfer.finish(nil)
        runner.completeStopped(transfer)
        queue.sync {}
        #expect(recorder.waitForDone())
        #expect(request.getStatus() == 0 && request.getFailureKind() == .aborted)
        #expect(Self.contents(folder + "/out.part") == "first part", "kept for a resume, without the late bytes")
        #expect(Self.contents(folder + "/out.part.validator") == "\"v1\"\n")
        #expect(Self.contents(folder + "/out") == nil)
    }

    @Test func anAsyncResponseHasTheSamePath() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let runner = ScriptedRunner { runner, transfer in
            runner.head(transfer, fields: "Content-Length: 6\r\n")
            runner.body(transfer, "abc")
            runner.body(transfer, "def")
            runner.finish(transfer)
        }
        let request = HttpRequest(runner: runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/stream"))
        #expect(request.setResponseFile(folder + "/out"))
        let response = try await request.response()
        #expect(response.status == 200)
        #expect(try await response.body.collect(upTo: 1 << 20).isEmpty, "the body is the file's")
        #expect(Self.contents(folder + "/out") == "abcdef")
    }

    /// The file fails mid-body (its folder replaced by one it cannot write): the send fails
    /// with the file's words and curl's write error, and nothing is passed off as whole.
    @Test func aFileThatCannotBeMadeFailsTheSendWithItsOwnWords() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let runner = ScriptedRunner { runner, transfer in
            // Between the send and the head, the folder went away.
            try? FileManager.default.removeItem(atPath: folder)
            runner.head(transfer, fields: "Content-Length: 3\r\n")
            #expect(runner.body(transfer, "abc") == .refused)
            runner.finish(transfer, failure: TransferFailure(kind: .other, text: "Failure writing output to destination", code: 23))
        }
        let request = HttpRequest(runner: runner)
        #expect(request.open("GET", url: "http://127.0.0.1:1/gone"))
        #expect(request.setResponseFile(folder + "/out"))
        #expect(request.send())
        #expect(request.getStatus() == 0)
        let text = request.getStatusText() ?? ""
        #expect(text.contains("cannot write") && text.contains("out.part"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
    }
}
