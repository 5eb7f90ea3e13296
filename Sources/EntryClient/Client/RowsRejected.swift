/// Rows the daemon did not store (import) or would not accept (`--dry-run`):
/// `entryctl` exits 65 (`EX_DATAERR`) with ``lines`` on stderr.
public struct RowsRejected: Error, Sendable, Equatable {
    /// The summary and hints, first line first, in both languages.
    public var lines: [Localized]
    /// A failure with these stderr lines.
    public init(lines: [Localized]) { self.lines = lines }
    /// A failure of one line.
    public init(_ line: Localized) { self.lines = [line] }
}
