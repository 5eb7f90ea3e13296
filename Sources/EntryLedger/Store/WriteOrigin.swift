import EntryModel

/// Who makes a write and why: recorded on the change-log row.
public struct WriteOrigin: Sendable {
    /// The actor: the client's user name (from SO_PEERCRED), never a client-sent value.
    public var actor: String
    /// Why (audit), from the call's `reason`.
    public var reason: String?

    /// An origin for `actor` (a user name), with an optional audit `reason`.
    public init(actor: String, reason: String? = nil) {
        self.actor = actor
        self.reason = reason
    }
}
