/// Rows the daemon did not store (import) or would not accept (`--dry-run`):
/// `entryctl` exits 65 (`EX_DATAERR`) with ``lines`` on stderr.
package struct RowsRejected: Error, Sendable, Equatable {
    /// The summary and hints, first line first, in both languages.
    package var lines: [Localized]
    /// A failure with these stderr lines.
    package init(lines: [Localized]) { self.lines = lines }
    /// A failure of one line.
    package init(_ line: Localized) { self.lines = [line] }
}
