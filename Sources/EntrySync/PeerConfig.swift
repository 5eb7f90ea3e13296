import EntryModel

/// A configured peer (entryd.conf `[peer NAME]`, or `entryd --peer NAME=ADDRESS`).
package struct PeerConfig: Sendable, Equatable {
    /// The peer's name (its checkpoints are stored under it).
    package var name: String
    /// `unix:/path` or `exec:COMMAND` (varlink over the command's stdin/stdout).
    package var address: String
    /// Seconds between automatic syncs (0: only on demand). Default 60.
    package var intervalSeconds: Int

    /// A peer entry; `intervalSeconds` 0 means sync only on demand.
    package init(name: String, address: String, intervalSeconds: Int = 60) {
        self.name = name
        self.address = address
        self.intervalSeconds = intervalSeconds
    }
}
