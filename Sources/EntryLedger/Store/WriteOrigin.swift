import EntryModel

/// Who makes a write and why: recorded on the change-log row.
package struct WriteOrigin: Sendable {
    /// The actor: the client's user name (from SO_PEERCRED), never a client-sent value.
    package var actor: String
    /// Why (audit), from the call's `reason`.
    package var reason: String?

    /// An origin for `actor` (a user name), with an optional audit `reason`.
    package init(actor: String, reason: String? = nil) {
        self.actor = actor
        self.reason = reason
    }
}
