import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// The cache's folder: an SQLite index (`index.sqlite`, in WAL mode so that processes sharing
/// the folder read while one writes) of the stored responses' heads, and their bodies as files
/// (`bodies/<name>`); the folder 0700, every file 0600. The folder and `bodies` are opened once
/// and every file is reached through them (`openat`), never through a symbolic link planted in
/// the folder: a `bodies` link is refused, the `changes` and index files are opened with
/// `O_NOFOLLOW`, and bodies are made afresh (`O_EXCL`).
///
/// Crash safety: a body is written to `bodies/<name>.part`, synced, then renamed to its name
/// and its row inserted in one SQLite transaction (the rename inside it). A torn body never has
/// a row; opening the store removes `.part` files no live writer holds (each writer keeps an
/// exclusive lock on its own) and bodies without a row, under the same write lock.
///
/// Size: the bodies' bytes plus their heads are kept at or under `maxBytes` by removing the
/// least recently used entries after each store.
package final class CacheStore: @unchecked Sendable {
    /// A stored response.
    package struct Entry: Sendable {
        package var id: Int64
        package var key: String
        /// The `Vary` field names of the response, lower-cased, and the request's values of them.
        package var varyNames: [String]
        package var varyValues: [String?]
        package var stored: CacheRules.Stored
        /// The status line's reason phrase and protocol (`HTTP/1.1`, `HTTP/2`), as received.
        package var reason: String
        package var httpVersion: String?
        /// The body is kept decoded although the head names a content coding (`Content-Encoding`).
        package var decoded: Bool
        package var bodyName: String
        package var bodySize: Int64

        /// An entry to store (``CacheStore/store(_:body:now:)`` sets its id and body).
        package init(key: String, varyNames: [String] = [], varyValues: [String?] = [], stored: CacheRules.Stored,
                     reason: String = "", httpVersion: String? = nil, decoded: Bool = false) {
            self.id = 0
            self.key = key
            self.varyNames = varyNames
            self.varyValues = varyValues
            self.stored = stored
            self.reason = reason
            self.httpVersion = httpVersion
            self.decoded = decoded
            self.bodyName = ""
            self.bodySize = 0
        }
    }

    /// A body being written: the caller writes to `descriptor`, then calls ``store(_:body:)``
    /// or ``discard(_:)``.
    package struct BodyFile: Sendable {
        package let name: String
        package let descriptor: Int32
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let folder: String
    package let maxBytes: Int64
    /// The folder and its `bodies` folder, opened once.
    private let folderDescriptor: Int32
    private let bodies: Int32
    private let database: OpaquePointer
    /// One connection for the process: its statements are used one at a time, under this
    /// lock, which also guards `statements` and `pendingTouches`.
    private let lock = Locked(())
    /// Statements prepared once, by their text.
    private var statements: [String: OpaquePointer] = [:]
    /// Entries used since the last write, and when: written with the next one (an entry read
    /// often is not a write each time), which evicts by them.
    private var pendingTouches: [Int64: Double] = [:]
    private var lastTouchWrite = 0.0
    /// The folder's change counter (the file `changes`, mapped shared by every process using
    /// the folder), counted up after each write; nil when it could not be mapped.
    private let changes: UnsafeMutablePointer<UInt64>?

    /// The layout of the index this code reads and writes (`PRAGMA user_version`): an index
    /// of another layout is replaced, its bodies removed as leftovers.
    static let schemaVersion = 2

    /// Opens (or makes) the store in `folder`, and removes what a crashed writer left.
    package init(folder: String, maxBytes: Int64) throws(Failure) {
        self.folder = folder
        self.maxBytes = maxBytes
        do throws(PrivateFiles.Failure) {
            folderDescriptor = try PrivateFiles.openFolder(folder, creating: true)
        } catch {
            throw Failure(description: "cannot make the cache folder \(MessageValidation.escaped(folder)): \(error)")
        }
        do throws(PrivateFiles.Failure) {
            bodies = try PrivateFiles.openFolder("bodies", in: folderDescriptor, creating: true)
        } catch {
            close(folderDescriptor)
            throw Failure(description: "cannot make the cache folder \(MessageValidation.escaped(folder))/bodies: \(error)")
        }
        changes = Self.mapChanges(folderDescriptor)
        let indexPath = folder + "/index.sqlite"
        var opened = Self.openIndex(indexPath, in: folderDescriptor)
        if case .failure(let problem) = opened, problem.damaged {
            // Not a database, or a damaged one: what it indexed is only a cache. A new index
            // replaces it, and the bodies it named go as leftovers.
            for suffix in ["", "-wal", "-shm"] { unlinkat(folderDescriptor, "index.sqlite" + suffix, 0) }
            opened = Self.openIndex(indexPath, in: folderDescriptor)
        }
        switch opened {
        case .success(let handle): database = handle
        case .failure(let problem):
            if let changes { munmap(changes, 8) }
            close(bodies)
            close(folderDescriptor)
            throw Failure(description: "cannot set up the cache index \(indexPath): \(problem.text)")
        }
        removeLeftovers()
        changed()  // a new index, or leftovers removed
    }

    private struct OpenProblem: Error {
        let text: String
        /// The file is no SQLite database, or a damaged one.
        let damaged: Bool
    }

    /// Opens the index at `path` in `folder` (made 0600 first, so its -wal and -shm files take
    /// that mode; neither that nor SQLite follows a link there) in WAL mode, with the table of
    /// this layout (``schemaVersion``; an index of another layout is emptied, its bodies then
    /// leftovers).
    private static func openIndex(_ path: String, in folder: Int32) -> Result<OpaquePointer, OpenProblem> {
        do throws(PrivateFiles.Failure) {
            close(try PrivateFiles.openFile("index.sqlite", in: folder, O_RDWR | O_CREAT))
        } catch {
            return .failure(OpenProblem(text: error.description, damaged: false))
        }
        if let problem = cxhr_sqlite_load() { return .failure(OpenProblem(text: String(cString: problem), damaged: false)) }
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        guard cxhr_sqlite3_open_v2(path, &opened, flags, nil) == SQLITE_OK,
              let handle = opened else {
            let text = opened.map { String(cString: cxhr_sqlite3_errmsg($0)) } ?? "out of memory"
            cxhr_sqlite3_close(opened)
            return .failure(OpenProblem(text: text, damaged: false))
        }
        cxhr_sqlite3_busy_timeout(handle, 10_000)
        let layout = [
            "DROP TABLE IF EXISTS entries",
            """
            CREATE TABLE entries (id INTEGER PRIMARY KEY, key TEXT NOT NULL, vary_names TEXT NOT NULL,
              vary_values TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, http_version TEXT NOT NULL,
              fields TEXT NOT NULL, decoded INTEGER NOT NULL, request_time REAL NOT NULL, response_time REAL NOT NULL,
              body_name TEXT NOT NULL, body_size INTEGER NOT NULL, last_used REAL NOT NULL)
            """,
            "CREATE INDEX entries_key ON entries (key)",
            "CREATE INDEX entries_last_used ON entries (last_used)",
            "PRAGMA user_version = \(schemaVersion)",
        ]
        let ready = executeWaiting(handle, "PRAGMA journal_mode=WAL") && executeWaiting(handle, "PRAGMA synchronous=NORMAL")
            && executeWaiting(handle, "BEGIN IMMEDIATE")
            && (userVersion(handle) == schemaVersion || layout.allSatisfy { cxhr_sqlite3_exec(handle, $0, nil, nil, nil) == SQLITE_OK })
            && cxhr_sqlite3_exec(handle, "COMMIT", nil, nil, nil) == SQLITE_OK
        guard ready else {
            let code = cxhr_sqlite3_errcode(handle)
            let problem = OpenProblem(text: String(cString: cxhr_sqlite3_errmsg(handle)), damaged: code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
            cxhr_sqlite3_close(handle)
            return .failure(problem)
        }
        return .success(handle)
    }

    private static func userVersion(_ handle: OpaquePointer) -> Int? {
        var statement: OpaquePointer?
        guard cxhr_sqlite3_prepare_v2(handle, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        defer { cxhr_sqlite3_finalize(statement) }
        return cxhr_sqlite3_step(statement) == SQLITE_ROW ? Int(cxhr_sqlite3_column_int64(statement, 0)) : nil
    }

    deinit {
        lock.withLock { _ in
            writePendingTouches()
            finalizeStatements()
        }
        cxhr_sqlite3_close(database)
        if let changes { munmap(changes, 8) }
        close(bodies)
        close(folderDescriptor)
    }

    // MARK: Reading

    /// The entries stored for `key`, every `Vary` variant, newest first.
    package func entries(for key: String) -> [Entry] {
        lock.withLock { _ in
            query("SELECT id, key, vary_names, vary_values, status, reason, http_version, fields, decoded, request_time, "
                  + "response_time, body_name, body_size FROM entries WHERE key = ? ORDER BY response_time DESC, id DESC",
                  [.text(key)]) { row in
                var entry = Entry(key: row.text(1), varyNames: Self.decodeNames(row.text(2)), varyValues: Self.decodeValues(row.text(3)),
                                  stored: CacheRules.Stored(status: Int(row.int(4)), fields: Self.decodeFields(row.text(7)),
                                                            requestTime: row.double(9), responseTime: row.double(10)),
                                  reason: row.text(5), httpVersion: row.text(6).isEmpty ? nil : row.text(6), decoded: row.int(8) != 0)
                entry.id = row.int(0)
                entry.bodyName = row.text(11)
                entry.bodySize = row.int(12)
                return entry
            }
        }
    }

    /// The entry of `entries(for:)` whose `Vary` values are those of `requestFields`.
    package func entry(for key: String, requestFields: CacheRules.Fields) -> Entry? {
        entries(for: key).first { $0.varyValues == CacheKeys.varyValues($0.varyNames, in: requestFields) }
    }

    /// An entry's body opened for reading, or -1 when it is gone (another process evicted or
    /// replaced it) or not the size stored. An open body stays readable when removed.
    package func openBody(_ entry: Entry) -> Int32 {
        guard let descriptor = try? PrivateFiles.openFile(entry.bodyName, in: bodies, O_RDONLY) else { return -1 }
        var size = stat()
        guard fstat(descriptor, &size) == 0, Int64(size.st_size) == entry.bodySize else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    /// The path of an entry's body file.
    package func bodyPath(_ entry: Entry) -> String { folder + "/bodies/" + entry.bodyName }

    /// A stamp that changes whenever an entry may have changed, by a write of this process or
    /// another one. Without the shared counter, each call gives a new stamp.
    package func changeStamp() -> UInt64 {
        guard let changes else { return UInt64.random(in: 0...UInt64.max) }
        return cxhr_shared_counter_load(changes)
    }

    /// Counts a write, once committed.
    private func changed() {
        if let changes { cxhr_shared_counter_add(changes) }
    }

    /// Maps the folder's change counter (nil for a link in its place: not followed).
    private static func mapChanges(_ folder: Int32) -> UnsafeMutablePointer<UInt64>? {
        guard let descriptor = try? PrivateFiles.openFile("changes", in: folder, O_RDWR | O_CREAT) else { return nil }
        defer { close(descriptor) }
        var size = stat()
        guard fstat(descriptor, &size) == 0, size.st_size >= 8 || ftruncate(descriptor, 4096) == 0,
              let mapped = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else { return nil }
        return mapped.bindMemory(to: UInt64.self, capacity: 1)
    }

    /// Marks an entry used at `now`: the least recently used go first when space is needed.
    /// Written at once at most every second (a process that answers once and exits still
    /// counts), otherwise with the next store or write of touches.
    package func touch(_ entry: Entry, now: Double) {
        lock.withLock { _ in
            pendingTouches[entry.id] = now
            if now - lastTouchWrite >= 1 {
                lastTouchWrite = now
                if execute("BEGIN IMMEDIATE") {
                    writePendingTouches()
                    if !execute("COMMIT") { _ = execute("ROLLBACK") }
                }
            }
        }
    }

    /// Writes the touches kept since the last write. Under `lock`.
    private func writePendingTouches() {
        guard !pendingTouches.isEmpty else { return }
        for (id, time) in pendingTouches {
            _ = run("UPDATE entries SET last_used = max(last_used, ?) WHERE id = ?", [.real(time), .int(id)])
        }
        pendingTouches.removeAll()
    }

    // MARK: Writing

    /// A new body file to write, locked against removal as a leftover until it is stored or
    /// discarded.
    package func beginBody() throws(Failure) -> BodyFile {
        var random = SystemRandomNumberGenerator()
        let name = [random.next(), random.next()].map { (word: UInt64) in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
        let descriptor: Int32
        do throws(PrivateFiles.Failure) {
            descriptor = try PrivateFiles.openFile(name + ".part", in: bodies, O_WRONLY | O_CREAT | O_EXCL)
        } catch {
            throw Failure(description: "cannot write in the cache folder \(MessageValidation.escaped(folder)): \(error)")
        }
        _ = flock(descriptor, LOCK_EX)
        return BodyFile(name: name, descriptor: descriptor)
    }

    /// Gives up a body being written.
    package func discard(_ body: BodyFile) {
        unlinkat(bodies, body.name + ".part", 0)
        close(body.descriptor)
    }

    /// Stores `entry` (its `id` and `bodyName` are set here) with the body written to `body`,
    /// replacing an entry of the same key and `Vary` values, then removes the least recently
    /// used entries beyond the size cap. The entry as stored, or why not (then the body is gone).
    @discardableResult
    package func store(_ entry: Entry, body: BodyFile, now: Double) throws(Failure) -> Entry {
        var size = stat()
        let synced = fsync(body.descriptor) == 0 && fstat(body.descriptor, &size) == 0
        guard synced else {
            let error = String(cString: strerror(errno))
            discard(body)
            throw Failure(description: "cannot write a body in the cache folder \(MessageValidation.escaped(folder)): \(error)")
        }
        var stored = entry
        stored.bodyName = body.name
        stored.bodySize = Int64(size.st_size)
        let result: Result<Entry, Failure> = lock.withLock { _ in
            guard execute("BEGIN IMMEDIATE") else { return .failure(lastFailure("begin")) }
            let replaced = query("SELECT id, body_name FROM entries WHERE key = ? AND vary_names = ? AND vary_values = ?",
                                 [.text(entry.key), .text(Self.encodeNames(entry.varyNames)), .text(Self.encodeValues(entry.varyValues))]) {
                ($0.int(0), $0.text(1))
            }
            guard renameat(bodies, body.name + ".part", bodies, body.name) == 0 else {
                let failure = Failure(description: "cannot store a body in the cache folder \(MessageValidation.escaped(folder)): \(String(cString: strerror(errno)))")
                _ = execute("ROLLBACK")
                return .failure(failure)
            }
            for (id, _) in replaced { _ = run("DELETE FROM entries WHERE id = ?", [.int(id)]) }
            writePendingTouches()
            let inserted = run("""
                INSERT INTO entries (key, vary_names, vary_values, status, reason, http_version, fields, decoded, request_time,
                  response_time, body_name, body_size, last_used)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(entry.key), .text(Self.encodeNames(entry.varyNames)), .text(Self.encodeValues(entry.varyValues)),
                      .int(Int64(entry.stored.status)), .text(entry.reason), .text(entry.httpVersion ?? ""),
                      .text(Self.encodeFields(entry.stored.fields)), .int(entry.decoded ? 1 : 0), .real(entry.stored.requestTime),
                      .real(entry.stored.responseTime), .text(body.name), .int(stored.bodySize), .real(now)])
            guard inserted, execute("COMMIT") else {
                let failure = lastFailure("store an entry")
                _ = execute("ROLLBACK")
                unlinkat(bodies, body.name, 0)
                return .failure(failure)
            }
            stored.id = cxhr_sqlite3_last_insert_rowid(database)
            changed()
            for (_, name) in replaced { unlinkat(bodies, name, 0) }
            evictBeyondCap()
            return .success(stored)
        }
        close(body.descriptor)
        return try result.get()
    }

    /// Replaces an entry's head and times (after a 304).
    package func update(_ entry: Entry, to stored: CacheRules.Stored, now: Double) {
        lock.withLock { _ in
            defer { changed() }
            _ = run("UPDATE entries SET status = ?, fields = ?, request_time = ?, response_time = ?, last_used = ? WHERE id = ?",
                    [.int(Int64(stored.status)), .text(Self.encodeFields(stored.fields)), .real(stored.requestTime),
                     .real(stored.responseTime), .real(now), .int(entry.id)])
        }
    }

    /// Removes every entry of `key` (an unsafe method's success invalidated it).
    package func remove(key: String) {
        lock.withLock { _ in
            guard execute("BEGIN IMMEDIATE") else { return }
            defer { changed() }
            let names = query("SELECT body_name FROM entries WHERE key = ?", [.text(key)]) { $0.text(0) }
            _ = run("DELETE FROM entries WHERE key = ?", [.text(key)])
            if execute("COMMIT") {
                for name in names { unlinkat(bodies, name, 0) }
            } else {
                _ = execute("ROLLBACK")
            }
        }
    }

    /// The bytes the store holds: bodies plus heads.
    package var totalBytes: Int64 {
        lock.withLock { _ in
            query("SELECT COALESCE(SUM(body_size + length(fields)), 0) FROM entries", []) { $0.int(0) }.first ?? 0
        }
    }

    // MARK: Upkeep

    /// Removes the least recently used entries until the store fits `maxBytes`. Inside the
    /// write transaction's lock.
    private func evictBeyondCap() {
        guard execute("BEGIN IMMEDIATE") else { return }
        var total = query("SELECT COALESCE(SUM(body_size + length(fields)), 0) FROM entries", []) { $0.int(0) }.first ?? 0
        guard total > maxBytes else {
            _ = execute("COMMIT")
            return
        }
        var removed: [String] = []
        let oldest = query("SELECT id, body_name, body_size + length(fields) FROM entries ORDER BY last_used, id", []) {
            ($0.int(0), $0.text(1), $0.int(2))
        }
        for (id, name, bytes) in oldest where total > maxBytes {
            _ = run("DELETE FROM entries WHERE id = ?", [.int(id)])
            removed.append(name)
            total -= bytes
        }
        if execute("COMMIT") {
            for name in removed { unlinkat(bodies, name, 0) }
        } else {
            _ = execute("ROLLBACK")
        }
    }

    /// Removes what crashed writers left: `.part` files nobody holds, bodies without a row,
    /// rows without a body.
    private func removeLeftovers() {
        lock.withLock { _ in
            guard execute("BEGIN IMMEDIATE") else { return }
            let known = Set(query("SELECT body_name FROM entries", []) { $0.text(0) })
            var present = Set<String>()
            // A descriptor of its own for the listing (one with its own offset).
            let listing = openat(bodies, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if listing >= 0, let directory = fdopendir(listing) {
                while let item = readdir(directory) {
                    let name = withUnsafeBytes(of: item.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                    if name == "." || name == ".." { continue }
                    if name.hasSuffix(".part") {
                        // A writer locks its .part just after making it: an empty one made
                        // in the last 10 s may be one about to be locked.
                        let descriptor = openat(bodies, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                        var size = stat()
                        if descriptor >= 0, fstat(descriptor, &size) == 0,
                           size.st_size > 0 || time(nil) - size.st_mtim.tv_sec > 10 {
                            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { unlinkat(bodies, name, 0) }
                        }
                        if descriptor >= 0 { close(descriptor) }
                    } else if known.contains(name) {
                        present.insert(name)
                    } else {
                        unlinkat(bodies, name, 0)
                    }
                }
                closedir(directory)
            } else if listing >= 0 {
                close(listing)
            }
            for name in known.subtracting(present) { _ = run("DELETE FROM entries WHERE body_name = ?", [.text(name)]) }
            if !execute("COMMIT") { _ = execute("ROLLBACK") }
        }
    }

    // MARK: SQLite

    private enum Value {
        case text(String)
        case int(Int64)
        case real(Double)
    }

    private struct Row {
        let statement: OpaquePointer
        func int(_ column: Int32) -> Int64 { cxhr_sqlite3_column_int64(statement, column) }
        func double(_ column: Int32) -> Double { cxhr_sqlite3_column_double(statement, column) }
        func text(_ column: Int32) -> String {
            guard let bytes = cxhr_sqlite3_column_text(statement, column) else { return "" }
            return String(cString: bytes)
        }
    }

    private func execute(_ sql: String) -> Bool {
        cxhr_sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK
    }

    /// `sqlite3_exec`, trying again for up to 10 s while another process holds the database:
    /// setting up a new index (the switch to WAL, the tables) can meet another process doing
    /// the same, where SQLite answers "database is locked" at once rather than through its
    /// busy handler.
    private static func executeWaiting(_ handle: OpaquePointer, _ sql: String) -> Bool {
        for _ in 0..<1000 {
            let code = cxhr_sqlite3_exec(handle, sql, nil, nil, nil)
            if code == SQLITE_OK { return true }
            guard code == SQLITE_BUSY || code == SQLITE_LOCKED else { return false }
            usleep(10_000)
        }
        return false
    }

    /// Runs a statement that returns no rows; whether it succeeded.
    private func run(_ sql: String, _ values: [Value]) -> Bool {
        withStatement(sql, values) { cxhr_sqlite3_step($0) == SQLITE_DONE } ?? false
    }

    private func query<Result>(_ sql: String, _ values: [Value], _ read: (Row) -> Result) -> [Result] {
        withStatement(sql, values) { statement in
            var rows: [Result] = []
            while cxhr_sqlite3_step(statement) == SQLITE_ROW { rows.append(read(Row(statement: statement))) }
            return rows
        } ?? []
    }

    /// `sql` prepared (once, then kept) with `values` bound; nil when it does not prepare.
    private func withStatement<Result>(_ sql: String, _ values: [Value], _ body: (OpaquePointer) -> Result) -> Result? {
        var prepared = statements[sql]
        if prepared == nil {
            guard cxhr_sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil) == SQLITE_OK,
                  let made = prepared else { return nil }
            statements[sql] = made
        }
        let statement = prepared!
        defer {
            cxhr_sqlite3_reset(statement)
            cxhr_sqlite3_clear_bindings(statement)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .text(let text): _ = cxhr_sqlite_bind_text(statement, index, text, -1)
            case .int(let number): cxhr_sqlite3_bind_int64(statement, index, number)
            case .real(let number): cxhr_sqlite3_bind_double(statement, index, number)
            }
        }
        return body(statement)
    }

    private func finalizeStatements() {
        for statement in statements.values { cxhr_sqlite3_finalize(statement) }
        statements.removeAll()
    }

    private func lastFailure(_ doing: String) -> Failure {
        Failure(description: "the cache index could not \(doing): \(String(cString: cxhr_sqlite3_errmsg(database)))")
    }

    // MARK: Encoding

    static func encodeFields(_ fields: CacheRules.Fields) -> String {
        fields.map { "\($0.name): \($0.value)\n" }.joined()
    }

    static func decodeFields(_ text: String) -> CacheRules.Fields {
        text.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), HeaderFieldNames.trimmed(line[line.index(after: colon)...]))
        }
    }

    static func encodeNames(_ names: [String]) -> String { names.joined(separator: "\n") }

    static func decodeNames(_ text: String) -> [String] {
        text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Each value on a line: "=" and the value, or "!" for an absent field.
    static func encodeValues(_ values: [String?]) -> String {
        values.map { $0.map { "=" + $0 } ?? "!" }.joined(separator: "\n")
    }

    static func decodeValues(_ text: String) -> [String?] {
        text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("=") ? String($0.dropFirst()) : nil }
    }
}
