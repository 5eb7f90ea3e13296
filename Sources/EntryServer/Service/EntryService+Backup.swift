@preconcurrency import Glibc
import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension EntryService {
    /// Raw bytes per `Backup` reply: 512 KiB (about 683 KiB of base64).
    static let backupChunkBytes = 512 << 10

    /// `io.entryd.Entries.Backup() -> (chunk, offset, size, node, schemaVersion)`
    /// (a project addition, `interfaces/io.entryd.Entries.additions.varlink`).
    ///
    /// Makes a consistent copy with ``EntryStore/consistentCopy()`` (the daemon
    /// keeps serving meanwhile), then streams it in base64 chunks of
    /// ``backupChunkBytes``, each reply but the last with `continues`; the
    /// snapshot file is removed afterwards, also when the client hangs up.
    /// Without `more`, a database larger than one chunk is refused with
    /// `LimitExceeded(max-message-size)`.
    func backup(_ c: CallContext, _ p: Parameters) throws {
        let path: String
        do {
            path = try store.consistentCopy()
        } catch let refusal as EntryError {
            throw refusal
        } catch {
            throw EntryError.storageFailed("cannot make a snapshot for the backup: \(error)")
        }
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw EntryError.storageFailed("cannot read the snapshot for the backup") }
        defer { close(fd) }
        var info = stat()
        fstat(fd, &info)
        let size = Int64(info.st_size)
        if !c.call.more && size > Int64(Self.backupChunkBytes) {
            throw EntryError.limitExceeded("max-message-size", maximum: limits.maxMessageBytes)
        }
        var offset: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: Self.backupChunkBytes)
        repeat {
            var filled = 0
            while filled < buffer.count {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { throw EntryError.storageFailed("cannot read the snapshot for the backup") }
                if n == 0 { break }
                filled += n
            }
            let last = offset + Int64(filled) >= size
            let chunk = Data(buffer[0..<filled]).base64EncodedString()
            try c.send(
                VarlinkReply(
                    parameters: .object([
                        ("chunk", .string(chunk)), ("offset", .int(offset)), ("size", .int(size)),
                        ("node", .string(store.nodeID)), ("schemaVersion", .int(Int64(store.schemaVersion))),
                    ]), continues: !last))
            offset += Int64(filled)
            if last || c.clientHungUp() { return }
        } while true
    }
}
