import EntryLedger
import EntryModel

/// A failed PostgreSQL call: the SQLSTATE (postgresql.org/docs/15/errcodes-appendix.html),
/// the server's or libpq's primary message, and the statement text (never its
/// parameters: form data is personal).
///
/// The message is for the operator's log; ``entryError`` is what a caller may be
/// shown. The primary message never holds the DETAIL field (where PostgreSQL
/// puts key values), but some primary messages quote input (`invalid input
/// syntax …`), so it is not shown to callers.
package struct PGError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. `40001` for a serialization failure;
    /// `08006` when the connection was lost without one.
    package let sqlState: String
    /// The primary message (PG_DIAG_MESSAGE_PRIMARY) or libpq's, or entryd's
    /// own words; never the DETAIL field, never parameter values.
    package let message: String
    /// The SQL text, without parameter values; may be empty.
    package let sql: String

    /// An error from a SQLSTATE, a message and (optional) SQL text.
    package init(sqlState: String, message: String, sql: String = "") {
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
    }

    /// The SQLSTATE of a connection URI libpq cannot parse (`22023`,
    /// invalid_parameter_value): a configuration error, not an unreachable server.
    package static let invalidURI = "22023"

    /// The transaction was rolled back because it could not be serialized with
    /// a concurrent one (`40001`) or was chosen as a deadlock victim (`40P01`):
    /// running the whole transaction again may succeed.
    package var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// The connection is gone or cannot be made (SQLSTATE class 08, or the
    /// server shutting down, class 57P): open a new connection and retry.
    package var isConnectionFailure: Bool { sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") }

    /// `PostgreSQL error SQLSTATE: message`, plus ` in 'SQL'` when known (its
    /// first 200 characters).
    package var description: String {
        guard !sql.isEmpty else { return "PostgreSQL error \(sqlState): \(message)" }
        let text = sql.count > 200 ? sql.prefix(200) + "…" : Substring(sql)
        return "PostgreSQL error \(sqlState): \(message) in '\(text)'"
    }
}

extension PGError: StorageError {
    /// The domain error with a reason safe to show (no values, no server
    /// message), chosen by the SQLSTATE class.
    package var entryError: EntryError {
        if isSerializationFailure { return .storageFailed("the database was busy with a concurrent write: retry") }
        if isConnectionFailure { return .storageFailed("the database server is unreachable: retry") }
        if sqlState == "25006" { return .storageFailed("the database is read-only (a standby?)") }
        switch sqlState.prefix(2) {
        case "53": return .storageFailed("the database server is out of resources (disk, memory or connections)")
        case "28": return .storageFailed("the database server refused entryd's credentials")
        case "3D": return .storageFailed("the database does not exist")
        default: return .storageFailed("the database refused a statement (SQLSTATE \(sqlState))")
        }
    }
}
