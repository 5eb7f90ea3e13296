/// A tab-separated table as data/README.md defines them: UTF-8, LF line ends,
/// one header row, no quoting, no tab or newline inside a value; list values
/// separated by `;`.
///
/// Only the embedded tables are read with it, so a malformed table is a
/// programmer error (a `precondition`), caught by ReferenceTests.
struct TSVTable {
    /// One data row; values are read by column name.
    struct Row {
        fileprivate let columns: [String: Int]
        fileprivate let values: [Substring]

        /// The value of `column` (`""` when empty).
        subscript(_ column: String) -> String {
            guard let index = columns[column] else { preconditionFailure("no column '\(column)' in table") }
            return String(values[index])
        }

        /// The `;`-separated list in `column` (`[]` when empty).
        func list(_ column: String) -> [String] {
            self[column].split(separator: ";").map(String.init)
        }

        /// The value of `column`, or `nil` when it is empty.
        func optional(_ column: String) -> String? {
            let value = self[column]
            return value.isEmpty ? nil : value
        }
    }

    /// The data rows, in file order.
    let rows: [Row]

    /// Reads `text`; every row must have as many values as the header.
    init(_ text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        precondition(!lines.isEmpty, "table without a header row")
        let header = lines.removeFirst().split(separator: "\t", omittingEmptySubsequences: false)
        let columns = Dictionary(uniqueKeysWithValues: header.enumerated().map { (String($1), $0) })
        rows = lines.map { line in
            let values = line.split(separator: "\t", omittingEmptySubsequences: false)
            precondition(values.count == header.count, "row with \(values.count) values, header has \(header.count)")
            return Row(columns: columns, values: values)
        }
    }
}
