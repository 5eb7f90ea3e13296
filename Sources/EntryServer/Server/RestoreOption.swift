import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// `entryd --restore FILE`: put a backup in place of the database, then exit
/// without serving. The daemon must be stopped.
///
/// Exit statuses: 0 restored; 64 `--restore` without a file; 65 (`EX_DATAERR`)
/// the backup fails a check; 69 (`EX_UNAVAILABLE`) an entryd answers on the
/// socket or holds the database open; 74 (`EX_IOERR`) a file system error.
package enum RestoreOption {
    /// Restores `backup` to `database` unless a daemon is live on `socket` or
    /// has the database open (``DatabaseBackup/restore(from:to:)``).
    /// - Returns: the exit status and one line for the user.
    package static func run(backup: String, database: String, socket: String) -> (status: ExitCode, message: String) {
        guard !backup.isEmpty else { return (.usage, "--restore needs the backup FILE") }
        guard FileManager.default.isReadableFile(atPath: backup) else {
            let exists = FileManager.default.fileExists(atPath: backup)
            return (
                .noInput,
                "not restored: "
                    + (exists
                        ? "cannot read '\(backup)' (permissions: run as the user that may read it)"
                        : "there is no file '\(backup)': check the path of the backup")
            )
        }
        if let live = try? VarlinkConnection(path: socket) {
            live.close()
            return (.unavailable, "an entryd is serving '\(socket)'; stop it before restoring (systemctl stop entryd)")
        }
        do {
            let existed = FileManager.default.fileExists(atPath: database)
            let previous = DatabaseBackup.storedNode(at: database)
            let info = try DatabaseBackup.restore(from: backup, to: database)
            let next =
                previous == info.node
                ? "its next start begins a new incarnation, and its peers send back what it lost"
                : "the backup is of node \(info.node)" + (previous.map { ", not of this place's node \($0)" } ?? "")
                    + ": the next start refuses until you say --as-new-node (serve it as a new node) or --moved (node "
                    + "\(info.node) moved here; its old place no longer runs it)"
            return (
                .success,
                "restored '\(backup)' to '\(database)': node \(info.node), \(info.entries) entries, "
                    + "change log to seq \(info.seq), schema \(info.schemaVersion); "
                    + (existed
                        ? "the previous database is '\(database).before-restore'; " : "there was no database before; ")
                    + next
            )
        } catch let error as DatabaseBackup.RestoreTargetInUse {
            return (.unavailable, error.description)
        } catch let error as DatabaseBackup.Failure {
            return (.dataError, "not restored: \(error.message)")
        } catch {
            return (.ioError, "not restored: \(error)")
        }
    }
}
