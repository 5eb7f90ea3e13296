// The inputs a session feeds its machine and the actions it gets back
// (ConnectionMachine.swift has the rules that connect them).

import EntryModel
import EntryProtocol

extension ConnectionMachine {
    /// A call's number on its connection: 0 for the first call decoded, then
    /// 1, 2, … in arrival order (never reused).
    typealias CallID = Int

    /// What the socket loop does next. Every event of the loop returns one;
    /// the loop executes it and feeds its outcome back.
    enum Action: Equatable {
        /// Wait up to `timeout` for bytes (the idle timer is armed: it fires
        /// `timeout` after the event that returned this action), then feed
        /// ``ConnectionMachine/bytesRead(_:now:)``, ``ConnectionMachine/inputEnded(now:)``
        /// (end of stream), ``ConnectionMachine/readFailed(now:)``, or
        /// ``ConnectionMachine/tick(now:)`` when the wait timed out. Always > 0.
        case read(timeout: Duration)
        /// Read what has already arrived, without waiting, and feed it to
        /// ``ConnectionMachine/bytesArrived(_:now:)`` (nothing when none has,
        /// or the read fails or finds the end: the read that follows the
        /// drain tells those apart). Asked while started calls wait and the
        /// buffer ends in part of a message, so a large call (an Import) is
        /// begun, and validated, while the calls before it are stored.
        case readAvailable
        /// Offer the call to ``CallHandler/begin(_:)`` and feed what it did to
        /// ``ConnectionMachine/callBegun(_:_:now:)``.
        case begin(CallID, VarlinkCall)
        /// Run the call with ``CallHandler/handle(_:)``: its replies go through
        /// ``ConnectionMachine/reply(_:from:)``, its end (or thrown error) to
        /// ``ConnectionMachine/callCompleted(_:error:now:)``.
        case handle(CallID, VarlinkCall)
        /// Run the closure the call's ``CallHandler/begin(_:)`` returned (it
        /// waits for the call's commit); replies and end as for ``handle(_:_:)``.
        case finish(CallID)
        /// Write this reply (blocking, up to the send timeout); feed
        /// ``ConnectionMachine/writeFailed()`` if that fails, then
        /// ``ConnectionMachine/next(now:)``.
        case send(VarlinkReply)
        /// Stop serving, for `reason`; every started call has been finished.
        /// The machine takes no more events.
        case close(CloseReason)
    }

    /// What ``CallHandler/begin(_:)`` did with a call.
    enum BeginOutcome: Equatable {
        /// It returned a closure: the call overlaps with the calls after it
        /// and is finished in its turn (``Action/finish(_:)``).
        case started
        /// It returned `nil`: the call is handled (``Action/handle(_:_:)``)
        /// once every earlier call is answered.
        case declined
        /// It threw: this error (mapped with ``WireError/init(mapping:)``) is
        /// the call's reply, sent in its turn.
        case failed(WireError)
    }

    /// What to do with one reply a running call sends.
    enum ReplyAction: Equatable {
        /// The call is oneway: write nothing; the handler carries on as if sent.
        case discard
        /// Write the reply now (blocking, up to the send timeout) and feed
        /// ``ConnectionMachine/writeFailed()`` if that fails. `startsStream`: it
        /// is the connection's first reply with `continues`, so the session's
        /// `onStream` callback runs first (once per connection).
        case send(startsStream: Bool)
        /// An earlier write failed: write nothing and fail the handler's send
        /// (the client is gone).
        case clientGone
    }

    /// What to do when shutdown is requested.
    enum ShutdownAction: Equatable {
        /// Nothing now: the running call (if any) and the calls already
        /// buffered are answered, then the session closes instead of reading.
        case drain
        /// The running call is streaming (it sent a `continues` reply):
        /// make its hang-up poll (``CallContext/clientHungUp``) report true so
        /// it ends the stream; then as for ``drain``.
        case stopStreaming
    }

    /// Why a session closed (the daemon's debug log says which).
    enum CloseReason: Equatable {
        /// End of stream from the client; `midMessage`: bytes of an unfinished
        /// message were buffered (they get no reply).
        case clientHungUp(midMessage: Bool)
        /// No byte arrived for `idle-timeout` while the session waited for one.
        case idleTimeout
        /// Reading the socket failed (e.g. `ECONNRESET`).
        case readFailed
        /// A message passed `max-message-size`; it was answered with
        /// `LimitExceeded(max-message-size)`.
        case messageTooLarge
        /// A message was not a call (not a JSON object, no string `method`,
        /// or a `parameters`/`more`/`oneway` of the wrong type); it was
        /// answered with that `InvalidParameter`.
        case undecodableMessage
        /// A write failed (the client hung up, or stopped reading for the
        /// send timeout).
        case clientGone
        /// Shutdown was requested and the buffered calls are answered.
        case shutdown
    }
}

extension ConnectionMachine.CloseReason {
    /// The event text for the daemon's debug log, or `nil` for an ordinary
    /// end (the client hung up between calls, or is gone).
    /// - Parameter idleTimeoutSeconds: the `idle-timeout` in force, in seconds.
    func logText(idleTimeoutSeconds: Int) -> String? {
        switch self {
        case .clientHungUp(let midMessage): midMessage ? "client hung up mid-message" : nil
        case .idleTimeout: "idle for \(idleTimeoutSeconds)s, closing"
        case .readFailed: nil  // the session logs the read's error itself
        case .messageTooLarge: "message over max-message-size, closing"
        case .undecodableMessage: "undecodable message, closing"
        case .clientGone: nil
        case .shutdown: "shutting down, closing"
        }
    }
}
