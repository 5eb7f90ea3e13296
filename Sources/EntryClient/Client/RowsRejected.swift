/// Rows the daemon did not store (import) or would not accept (`--dry-run`):
/// `entryctl` exits 65 (`EX_DATAERR`) with ``lines`` on stderr.
public struct RowsRejected: Error, Sendable, Equatable {
    /// The summary and hints, first line first.
    public var lines: [String]
    /// A failure with these stderr lines.
    public init(lines: [String]) { self.lines = lines }
}
