import EntryModel
import EntryProtocol

/// What a method handler gets besides its parameters: who calls, and how to
/// answer (once, or several times for a `more` call).
package struct CallContext {
    /// The connected client, from SO_PEERCRED.
    package let caller: Caller
    /// The call as received (its `more` flag tells whether streaming is allowed).
    package let call: VarlinkCall
    /// Sends one reply. Throws ``SystemError`` when the client is gone.
    package let send: (VarlinkReply) throws -> Void
    /// True once the client has hung up, or the session is shutting down
    /// (for long-running streams).
    let clientHungUp: () -> Bool
    /// The actor recorded on every change this call makes: the caller's user
    /// name, or `web:NAME` when a gateway caller names the web user it acts for
    /// (the `actor` parameter; doc/design.md "Security and limits"). Set once
    /// by ``EntryService`` before the method runs.
    var actor: String

    /// A call of `caller`, whose actor is the caller's user name until
    /// ``EntryService`` reads the call's `actor` parameter.
    init(
        caller: Caller, call: VarlinkCall, send: @escaping (VarlinkReply) throws -> Void,
        clientHungUp: @escaping () -> Bool
    ) {
        self.caller = caller
        self.call = call
        self.send = send
        self.clientHungUp = clientHungUp
        self.actor = caller.userName
    }
}

/// Handles calls; implemented by ``EntryService``.
package protocol CallHandler: AnyObject, Sendable {
    /// Handles one call: sends its reply (or replies) through `context.send`,
    /// or throws a ``WireError`` (or any error, which the session maps with
    /// ``WireError/init(mapping:)``) to answer with an error instead.
    func handle(_ context: CallContext) throws

    /// Starts a call that may overlap with the calls after it on the same
    /// connection (a write queued for the next group commit), or returns `nil`
    /// to have it handled by ``handle(_:)`` once every earlier call is answered.
    ///
    /// ### Implementing
    /// Queue the work in the order of the calls (the session calls `begin` in
    /// the order the calls arrived) and do not send anything here: the
    /// returned closure waits for the outcome and sends the reply; the session
    /// runs those closures in call order. What `begin` throws is the call's
    /// error reply, sent in its turn.
    func begin(_ context: CallContext) throws -> (() throws -> Void)?

    /// Told once per call when its answer is decided, with the error it is
    /// answered with (`nil`: it succeeded), by the session's thread: the
    /// monitoring counters (``ServiceMetrics``).
    func answered(_ call: VarlinkCall, error: WireError?)
}

extension CallHandler {
    /// Nothing is counted.
    func answered(_ call: VarlinkCall, error: WireError?) {}

    /// No call overlaps: every call is handled in turn.
    func begin(_ context: CallContext) throws -> (() throws -> Void)? { nil }
}
