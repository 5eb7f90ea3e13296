import CSQLite
import Foundation
import Synchronization

/// How far the purge after an erasure has got (``EntryStore/purgeProgress``):
/// `VerifyErasure`'s `purge` member while one is pending.
package struct PurgeProgress: Sendable, Equatable {
    /// Pages of the database file cleaned in this pass (0 on a database server).
    package var pagesDone: Int
    /// Pages the database file had when the pass began (0 on a database
    /// server, or before the first step).
    package var pages: Int
    /// When the purge should end, in seconds from now, at the pace so far;
    /// `nil` when there is no pace yet.
    package var secondsLeft: Double?

    /// A value with every member given.
    package init(pagesDone: Int, pages: Int, secondsLeft: Double?) {
        self.pagesDone = pagesDone
        self.pages = pages
        self.secondsLeft = secondsLeft
    }
}

/// The purge that follows an erasure on SQLite (doc/design.md "Erasure",
/// issue 34): the erasure's transaction overwrites the entry's rows and
/// `secure_delete` zeroes the cells it frees, the overflow pages and the pages
/// it puts on the freelist, but a b-tree balance that moved a cell (now
/// erased) to another page left its old bytes in the unused space of the page
/// it left, and the WAL holds old page images. The purge removes exactly
/// those, up to 1,024 pages at a time, each step alone on the writer between
/// two write rounds: for each page of the step that is a b-tree page and
/// whose latest image is in the database file (a passive checkpoint on the
/// purge's own connection copied the WAL into it just before; a page still
/// in the WAL is left for a later step), the bytes outside its cells (the gap
/// between the cell pointers and the cell content, and the freeblocks) are
/// set to zero in the file, through SQLite's own file handle; then the
/// writer's page cache is dropped, so no cached copy carries old bytes back.
/// The fsyncs happen on the purge thread, outside the writer's turn. Readers
/// never wait (they read the same cells); a writer waits for one step, a
/// few milliseconds of reads and writes to the OS's cache.
/// Several erasures during a pass are purged by the pass that follows.
final class ErasurePurge: Sendable {
    private struct State {
        /// Erasures asked for, and the count the last finished pass covered.
        var requested = 0
        var covered = 0
        /// A pass runs (its thread lives).
        var running = false
        var closed = false
        var pagesDone = 0
        var pages = 0
        var passBegan: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    private let finished = NSCondition()
    /// The SQLite VFS the store's connections use (`nil`: the default), for the purge's own connection.
    let vfs: String?

    /// A purge for a store whose connections use `vfs`.
    init(vfs: String? = nil) {
        self.vfs = vfs
    }

    /// Pages cleaned per step at most; a step also ends after ``stepBudget``.
    static let pagesPerStep = 1024
    /// How long one step may clean pages (the writer waits this).
    static let stepBudget = Duration.milliseconds(10)
    /// How long a checkpoint in the writer's turn waits for readers before it gives up (ms).
    static let checkpointBusyMs: Int32 = 10

    /// True while an erasure's purge is still to finish.
    var isPending: Bool { state.withLock { $0.covered < $0.requested } }

    /// The pending purge's progress, `nil` when none is pending.
    var progress: PurgeProgress? {
        state.withLock { s -> PurgeProgress? in
            guard s.covered < s.requested else { return nil }
            var left: Double?
            if let began = s.passBegan, s.pagesDone > 0, s.pages > 0 {
                let spent = ContinuousClock.now - began
                let seconds = Double(spent.components.seconds) + Double(spent.components.attoseconds) / 1e18
                left = max(0, seconds / Double(s.pagesDone) * Double(max(0, s.pages - s.pagesDone)))
            }
            return PurgeProgress(pagesDone: s.pagesDone, pages: s.pages, secondsLeft: left)
        }
    }

    /// Asks for a purge: starts a pass on a thread of its own unless one runs
    /// (a running pass is followed by another, which covers this erasure).
    func request(_ store: EntryStore) {
        let start = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.requested += 1
            guard !s.running else { return false }
            s.running = true
            return true
        }
        guard start else { return }
        let thread = Thread { [weak store] in
            // nextPass() clears `running` when it ends the loop, under the same lock as request().
            while let store, let target = self.nextPass() {
                let done = store.purgePass()
                self.passEnded(covering: done ? target : nil)
                if !done { Thread.sleep(forTimeInterval: 0.05) }
            }
            self.finished.broadcast()
        }
        thread.name = "entryd-purge"
        thread.start()
    }

    /// The count of requests the next pass covers, or `nil` to stop.
    private func nextPass() -> Int? {
        state.withLock { s -> Int? in
            guard !s.closed, s.covered < s.requested else {
                s.running = false
                return nil
            }
            s.pagesDone = 0
            s.pages = 0
            s.passBegan = nil
            return s.requested
        }
    }

    private func passEnded(covering target: Int?) {
        state.withLock { s in
            if let target { s.covered = max(s.covered, target) }
        }
        finished.broadcast()
    }

    /// Records a step's progress.
    func stepped(done: Int, of pages: Int) {
        state.withLock { s in
            if s.passBegan == nil { s.passBegan = .now }
            s.pagesDone = done
            s.pages = pages
        }
    }

    /// True once the store closes: a pass stops at its next step.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Stops: a running pass ends at its next step; what it did not finish is
    /// done after the next open (the mark stays in the database).
    func close() {
        state.withLock { $0.closed = true }
        finished.broadcast()
    }

    /// Waits until no purge is pending or `timeout` passed; returns whether none is pending.
    func wait(timeout: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(
            Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        finished.lock()
        defer { finished.unlock() }
        while isPending && !isClosed {
            // The condition is broadcast at each pass's end; the timed wait covers a missed one.
            if !finished.wait(until: min(deadline, Date().addingTimeInterval(0.1))) && Date() >= deadline {
                break
            }
        }
        return !isPending
    }
}

extension EntryStore {
    /// The pending purge's progress after an erasure (``ErasurePurge``), `nil`
    /// when none is pending. On a database server: pending while the mark of an
    /// erasure whose tables are not yet rewritten stays, without page counts.
    package var purgeProgress: PurgeProgress? {
        if server != nil {
            let pending = (try? readers.read(EntryStore.isRewritePending)) ?? false
            return pending ? PurgeProgress(pagesDone: 0, pages: 0, secondsLeft: nil) : nil
        }
        return purge.progress
    }

    /// Waits until no erasure's purge is pending (at most `timeout`) and returns
    /// whether none is (tests, and entryctl through `VerifyErasure`).
    @discardableResult
    package func waitForPurge(timeout: Duration = .seconds(120)) -> Bool {
        server != nil ? purgeProgress == nil : purge.wait(timeout: timeout)
    }

    /// One pass of the purge over every page of the database file, then a
    /// truncating checkpoint, then the erasures' mark removed. Returns false
    /// when the store closed or a step failed (the caller tries again).
    ///
    /// No step syncs a file in the writer's turn: the purge thread does, on
    /// a connection of its own. Before each step a passive checkpoint copies
    /// the WAL's frames into the database file; the step leaves alone the
    /// pages whose latest image is in frames committed since (it finds them
    /// in the WAL) and comes back to them; after the step the pages it zeroed
    /// are written back (``SQLiteConnection/syncFile()``). Only a last step,
    /// for pages the writers kept changing (a table's root), checkpoints in
    /// the writer's turn.
    func purgePass() -> Bool {
        var mark: String?
        var next = 1
        var skipped: [Int] = []
        var reachedEnd = false
        var checkpointNext = false
        let own = try? SQLiteConnection(path: path, vfs: purge.vfs)
        while true {
            if purge.isClosed { return false }
            _ = own?.checkpointPassive()
            let began = ContinuousClock.now
            let step: PurgeStep?
            // Pages left in the WAL are cleaned in the next steps; once the last page was
            // reached, a step checkpoints in the writer's turn and cleans all that are left.
            let plan = PurgePlan(
                first: next, revisit: skipped,
                checkpointFirst: own == nil || checkpointNext || (reachedEnd && !skipped.isEmpty))
            do {
                step = try writer.perform { db -> PurgeStep? in
                    guard let db = db as? SQLiteConnection else { return PurgeStep(next: Int.max, pages: 0) }
                    if mark == nil {
                        var value = ""
                        try db.statement("SELECT value FROM node WHERE key = 'rewrite_pending'").query {
                            value = $0.text(0)
                        }
                        mark = value
                    }
                    return try db.purgeStep(plan, syncingAtEnd: own == nil)
                }
            } catch {
                return false
            }
            guard let step else {
                // Readers held WAL frames the checkpoint could not copy: let them finish, then try again.
                Thread.sleep(forTimeInterval: 0.005)
                continue
            }
            let held = ContinuousClock.now - began
            // Unsynced zeroed pages must not outlive the mark: a pass whose sync failed runs again.
            if step.written > 0, own?.syncFile() == false { return false }
            next = step.next
            skipped = step.skipped
            checkpointNext = step.checkpointNext
            purge.stepped(done: min(next - 1, step.pages), of: step.pages)
            if next > step.pages {
                reachedEnd = true
                // The pass ends once no page is left; its pages were written back above.
                if skipped.isEmpty { break }
            }
            // Leave the writer to the rounds queued meanwhile for about as long as the step held it.
            if held > .milliseconds(1) {
                Thread.sleep(forTimeInterval: min(0.02, Double(held.components.attoseconds) / 1e18))
            }
        }
        // The WAL frames written during the pass hold only cleaned pages; truncate it anyway
        // (tried until readers let it), then the mark of the erasures this pass covered goes.
        while !truncateWAL() {
            if purge.isClosed { return false }
        }
        do {
            try writer.perform { db in
                try db.statement("DELETE FROM node WHERE key = 'rewrite_pending' AND value = ?").run([
                    .text(mark ?? "")
                ])
            }
        } catch {
            return false
        }
        return true
    }
}

/// Which pages one step of the purge cleans (``SQLiteConnection/purgeStep(_:syncingAtEnd:)``).
struct PurgePlan: Sendable {
    /// The first page of the step's run of pages.
    var first: Int
    /// Pages an earlier step left because their latest image was in the WAL.
    var revisit: [Int]
    /// Checkpoint in the writer's turn first, so no page is left in the WAL.
    var checkpointFirst: Bool
}

/// What one step of the purge did (``SQLiteConnection/purgeStep(_:syncingAtEnd:)``).
struct PurgeStep: Sendable {
    /// The next page to clean.
    var next: Int
    /// The database file's page count.
    var pages: Int
    /// Pages written back zeroed.
    var written = 0
    /// Pages left because their latest image was in the WAL, to be cleaned later.
    var skipped: [Int] = []
    /// The WAL could not be read: the next step checkpoints first.
    var checkpointNext = false
}

extension SQLiteConnection {
    /// `PRAGMA wal_checkpoint(TRUNCATE)`, waiting at most `busyMs` for readers
    /// (SQLite's busy handler), then the connection's usual timeout again.
    /// - Returns: whether the WAL was checkpointed and truncated.
    func checkpointTruncate(busyMs: Int32) -> Bool {
        sqlite3_busy_timeout(handle, busyMs)
        defer { sqlite3_busy_timeout(handle, busyTimeoutMs) }
        var busy = true
        do {
            try statement("PRAGMA wal_checkpoint(TRUNCATE)").query { busy = $0.int(0) != 0 }
        } catch {
            return false
        }
        return !busy
    }

    /// `PRAGMA wal_checkpoint(PASSIVE)`: copies the WAL's frames into the
    /// database file without waiting for anyone (not even the writer), and
    /// leaves the WAL to be reset by the next write.
    /// - Returns: whether every frame is now in the database file.
    func checkpointPassive() -> Bool { checkpointCompletes("PASSIVE") }

    /// `PRAGMA wal_checkpoint(FULL)`, waiting at most `busyMs` for readers on
    /// older snapshots (SQLite's busy handler) before it copies the WAL's
    /// frames into the database file, in one sync; the WAL is left to be
    /// reset by the next write.
    /// - Returns: whether every frame is now in the database file.
    func checkpointFull(busyMs: Int32) -> Bool {
        sqlite3_busy_timeout(handle, busyMs)
        defer { sqlite3_busy_timeout(handle, busyTimeoutMs) }
        return checkpointCompletes("FULL")
    }

    private func checkpointCompletes(_ mode: String) -> Bool {
        var complete = false
        do {
            try statement("PRAGMA wal_checkpoint(\(mode))").query {
                complete = $0.int(0) == 0 && $0.int(1) == $0.int(2)
            }
        } catch {
            return false
        }
        return complete
    }

    /// Writes the database file's changed pages to the disk through this
    /// connection's file handle (`fdatasync`), whoever changed them: on the
    /// purge's own connection, so no writer waits for it.
    /// - Returns: whether the file was synced.
    func syncFile() -> Bool {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let sync = file.pointee.pMethods?.pointee.xSync
        else { return false }
        return sync(file, SQLITE_SYNC_NORMAL | SQLITE_SYNC_DATAONLY) == SQLITE_OK
    }

    /// The pages whose latest image is in WAL frames not yet copied into the
    /// database file (sqlite.org/walformat.html): the frames from the
    /// wal-index's `nBackfill` + 1 to its `mxFrame`, each frame's header
    /// naming its page. Call it holding the write lock, so no frame is added
    /// meanwhile (a checkpoint that copies some only makes the set smaller
    /// than it says). `nil` when the WAL or the wal-index cannot be read.
    func pagesInWAL(pageSize: Int) -> Set<Int>? {
        var db: UnsafeMutablePointer<sqlite3_file>?
        var wal: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &db) == SQLITE_OK,
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK,
            let db, let wal, let dbMethods = db.pointee.pMethods, dbMethods.pointee.iVersion >= 2,
            let shmMap = dbMethods.pointee.xShmMap, let read = wal.pointee.pMethods?.pointee.xRead
        else { return nil }
        // The wal-index's first region: its header (two copies of 48 bytes), then the
        // checkpoint information, nBackfill first (offset 96); native byte order.
        var region: UnsafeMutableRawPointer?
        guard shmMap(db, 0, 32768, 0, &region) == SQLITE_OK, let region else { return nil }
        let header = UnsafeRawPointer(region)
        guard header.load(fromByteOffset: 12, as: UInt8.self) != 0 else { return nil }  // isInit
        let maxFrame = Int(header.load(fromByteOffset: 16, as: UInt32.self))
        let backfilled = Int(header.load(fromByteOffset: 96, as: UInt32.self))
        var pages = Set<Int>()
        guard backfilled < maxFrame else { return pages }
        var number = [UInt8](repeating: 0, count: 4)
        for frame in (backfilled + 1)...maxFrame {
            // A frame: a 24-byte header (the page number first, big-endian), then the page.
            let offset = 32 + Int64(frame - 1) * Int64(24 + pageSize)
            let rc = number.withUnsafeMutableBytes { read(wal, $0.baseAddress, 4, offset) }
            guard rc == SQLITE_OK else { return nil }
            pages.insert(Int(number[0]) << 24 | Int(number[1]) << 16 | Int(number[2]) << 8 | Int(number[3]))
        }
        return pages
    }

    /// One step of ``EntryStore/purgePass()``, outside any transaction: holding
    /// the write lock, cleans the pages of `plan` (``PagePurge/clean(_:page:usable:)``):
    /// those left before, then from `plan.first` on for up to
    /// ``ErasurePurge/stepBudget`` or ``ErasurePurge/pagesPerStep`` pages;
    /// writes the changed ones into the database file, and drops the
    /// connection's cached pages. A page whose latest image is in the WAL
    /// (``pagesInWAL(pageSize:)``) is left for a later step: a checkpoint
    /// would copy that image over the cleaned one. With `plan.checkpointFirst`
    /// a full checkpoint comes first (`nil` when readers held frames it could
    /// not copy), so none is left. With `syncingAtEnd` the step that reaches
    /// the last page syncs the file (else the purge thread does, on its own
    /// connection); a crash before that leaves the mark, and the purge runs
    /// again at the next open.
    /// - Returns: the step: the next page, the file's page count, the pages left.
    /// - Throws: ``SQLiteError``.
    func purgeStep(_ plan: PurgePlan, syncingAtEnd: Bool) throws -> PurgeStep? {
        if plan.checkpointFirst {
            guard checkpointFull(busyMs: ErasurePurge.checkpointBusyMs) else { return nil }
        }
        try execute("BEGIN IMMEDIATE")
        var committed = false
        defer {
            if !committed { try? execute("ROLLBACK") }
            // Cached pages may hold the bytes just zeroed in the file: drop them all.
            sqlite3_db_release_memory(handle)
        }
        var pageCount = 0
        var pageSize = 0
        try statement("PRAGMA page_count").query { pageCount = Int($0.int(0)) }
        try statement("PRAGMA page_size").query { pageSize = Int($0.int(0)) }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let methods = file.pointee.pMethods, let read = methods.pointee.xRead,
            let write = methods.pointee.xWrite, let sync = methods.pointee.xSync, pageSize >= 512
        else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "no file handle for the database")
        }
        // After a complete checkpoint in this turn nothing is in the WAL; else ask it.
        let inWAL: Set<Int>
        if plan.checkpointFirst {
            inWAL = []
        } else if let pages = pagesInWAL(pageSize: pageSize) {
            inWAL = pages
        } else {
            // The WAL cannot be read: nothing is cleaned this time, and the next step checkpoints first.
            try execute("COMMIT")
            committed = true
            var step = PurgeStep(next: plan.first, pages: pageCount)
            step.skipped = plan.revisit
            step.checkpointNext = true
            return step
        }
        var page = [UInt8](repeating: 0, count: pageSize)
        // Reserved bytes at the end of each page (header offset 20), not ours to touch.
        let reserved = try page.withUnsafeMutableBytes { buffer -> Int in
            let rc = read(file, buffer.baseAddress, Int32(pageSize), 0)
            guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "reading page 1") }
            return Int(buffer[20])
        }
        let lockBytePage = (1 << 30) / pageSize + 1
        var written = 0
        var skipped: [Int] = []
        func clean(_ number: Int) throws {
            guard number != lockBytePage, number <= pageCount else { return }
            guard !inWAL.contains(number) else {
                skipped.append(number)
                return
            }
            let offset = Int64(number - 1) * Int64(pageSize)
            try page.withUnsafeMutableBytes { buffer in
                let rc = read(file, buffer.baseAddress, Int32(pageSize), offset)
                guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "reading page \(number)") }
                guard PagePurge.clean(buffer, page: number, usable: pageSize - reserved) else { return }
                let wc = write(file, buffer.baseAddress, Int32(pageSize), offset)
                guard wc == SQLITE_OK else { throw SQLiteError(code: wc, message: "writing page \(number)") }
                written += 1
            }
        }
        for number in plan.revisit { try clean(number) }
        let began = ContinuousClock.now
        var next = plan.first
        while next <= pageCount && next < plan.first + ErasurePurge.pagesPerStep {
            let number = next
            next += 1
            try clean(number)
            if ContinuousClock.now - began > ErasurePurge.stepBudget { break }
        }
        if next > pageCount && syncingAtEnd {
            let rc = sync(file, SQLITE_SYNC_FULL)
            guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "syncing the database file") }
        }
        try execute("COMMIT")
        committed = true
        return PurgeStep(next: next, pages: pageCount, written: written, skipped: skipped)
    }
}

/// The bytes of a database page outside its cells (SQLite's file format,
/// sqlite.org/fileformat2.html "B-tree Pages").
enum PagePurge {
    /// Sets to zero the bytes of b-tree page `page` (1-based) that no cell
    /// holds: the gap between the cell pointer array and the cell content
    /// area, and each freeblock past its 4-byte header. Pages of other kinds
    /// (overflow, freelist: their first byte is a page number's high byte, 0
    /// in a file below 2^24 pages) and pages whose header does not add up are
    /// left as they are. Fragments (at most 3 bytes each) stay.
    /// - Parameter usable: the page size less the reserved bytes.
    /// - Returns: whether a byte changed.
    static func clean(_ data: UnsafeMutableRawBufferPointer, page: Int, usable: Int) -> Bool {
        let header = page == 1 ? 100 : 0
        guard usable <= data.count, header + 12 <= usable else { return false }
        let u16 = { (at: Int) -> Int in Int(data[at]) << 8 | Int(data[at + 1]) }
        let kind = data[header]
        guard kind == 2 || kind == 5 || kind == 10 || kind == 13 else { return false }
        let cells = u16(header + 3)
        var content = u16(header + 5)
        if content == 0 { content = 65536 }
        let pointersEnd = header + (kind == 10 || kind == 13 ? 8 : 12) + 2 * cells
        guard pointersEnd <= content, content <= usable else { return false }
        // The freeblocks first: all must add up before anything is written.
        var blocks: [(Int, Int)] = []
        var at = u16(header + 1)
        while at != 0 {
            guard at >= content, at + 4 <= usable, blocks.count < usable / 4 else { return false }
            let size = u16(at + 2)
            guard size >= 4, at + size <= usable else { return false }
            blocks.append((at + 4, at + size))
            let following = u16(at)
            guard following == 0 || following >= at + size else { return false }
            at = following
        }
        var changed = false
        for (from, to) in [(pointersEnd, content)] + blocks where from < to {
            for i in from..<to where data[i] != 0 {
                data[i] = 0
                changed = true
            }
        }
        return changed
    }
}
