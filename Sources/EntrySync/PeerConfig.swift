import EntryModel

/// A configured peer (entryd.conf `[peer NAME]`, or `entryd --peer NAME=ADDRESS`).
public struct PeerConfig: Sendable, Equatable {
    /// The peer's name (its checkpoints are stored under it).
    public var name: String
    /// `unix:/path` or `exec:COMMAND` (varlink over the command's stdin/stdout).
    public var address: String
    /// Seconds between automatic syncs (0: only on demand). Default 60.
    public var intervalSeconds: Int

    /// A peer entry; `intervalSeconds` 0 means sync only on demand.
    public init(name: String, address: String, intervalSeconds: Int = 60) {
        self.name = name
        self.address = address
        self.intervalSeconds = intervalSeconds
    }
}
