/// Every resource a client can make the daemon allocate has a named limit here
/// (configuration keys in parentheses; `config/entryd.conf` documents them).
package struct Limits: Sendable, Equatable {
    /// Largest message, in bytes before its NUL (`max-message-size`). Default 4 MiB; 4 KiB…64 MiB.
    package var maxMessageBytes = 4 << 20
    /// Simultaneous client connections (`max-connections`). Default 1024; 1…65536.
    package var maxConnections = 1024
    /// Seconds a connection may stay silent between calls before it is closed
    /// (`idle-timeout`); an open `Changes` stream is exempt. Default 300; 1…86400.
    package var idleTimeoutSeconds = 300
    /// Rows in one Import or changes in one Apply (`max-batch`). Default 10,000; 1…1,000,000.
    package var maxBatch = 10_000
    /// How far ahead of the local clock a received change may be, in milliseconds
    /// (`max-clock-skew`). Default 5 minutes.
    package var maxClockSkewMs = 5 * 60 * 1000
    /// Seconds to wait for a peer's reply during a sync before it counts as
    /// unreachable (`peer-timeout`). Default 30; 1…3600.
    package var peerTimeoutSeconds = 30
    /// Entries in one List page (the `limit` parameter is clamped to it). Fixed at 1000.
    package var maxPageSize = 1000
    /// Seconds without contact after which compaction marks a peer expired and
    /// no longer waits for it (`peer-expiry`; doc/design.md "Compaction").
    /// Default 90 days; 1 hour…3650 days.
    package var peerExpirySeconds = 90 * 86_400
    /// Seconds between scheduled compactions (`compact-interval`); 0: none,
    /// only `entryctl compact`. Default 0; 0…365 days.
    package var compactIntervalSeconds = 0

    /// The defaults above (the embedded defaults of `entryd.conf`).
    package init() {}

    /// The limits by configuration key, as `Status` reports them.
    package var byKey: [(String, Int)] {
        [
            ("max-message-size", maxMessageBytes), ("max-connections", maxConnections),
            ("idle-timeout", idleTimeoutSeconds), ("max-batch", maxBatch), ("max-clock-skew", maxClockSkewMs / 1000),
            ("peer-timeout", peerTimeoutSeconds),
            ("max-page-size", maxPageSize),
        ]
    }
}
