import EntryModel

/// What ``EntryStore/apply(_:via:layout:maxClockSkewMs:pulled:)`` did.
package struct ApplyResult: Sendable, Equatable {
    /// Changes stored now.
    package var applied = 0
    /// Changes already in the change log (received before, directly or through another node).
    package var skipped = 0
    /// Conflict records created by the batch and still open at its end
    /// (concurrent writes of the same register; one that a later change of the
    /// same batch superseded is not counted).
    package var conflicts = 0
    /// Values of the batch re-spelled at once under this node's rules (from a
    /// node with older rules, or brought back by a restore), each by an
    /// `update` change of ``WriteOrigin/migrationActor`` made here.
    package var recanonicalised = 0
    /// This node's highest seq after the batch.
    package var seq: Int64 = 0
    /// Changes refused, not stored, because their entry was erased (doc/design.md
    /// "Erasure": no resurrection).
    package var refusedErased = 0

    /// A result with the given counts (all 0 by default).
    package init(applied: Int = 0, skipped: Int = 0, conflicts: Int = 0, seq: Int64 = 0, refusedErased: Int = 0) {
        self.refusedErased = refusedErased
        self.applied = applied
        self.skipped = skipped
        self.conflicts = conflicts
        self.seq = seq
    }
}
