// Where a session is: the states of ConnectionMachine (ConnectionMachine.swift has
// the transitions).

import EntryModel
import EntryProtocol

extension ConnectionMachine {
    /// Where the connection is; `then` says what follows a drain.
    enum State: Equatable {
        /// Taking the next buffered message.
        case decoding
        /// The call is offered to ``CallHandler/begin(_:)``.
        case beginning(CallID, VarlinkCall)
        /// Finishing the started calls in order, then `then`.
        case draining(then: AfterDrain)
        /// The call runs in ``CallHandler/handle(_:)``; `oneway` as the call's.
        case handling(CallID, oneway: Bool)
        /// The started call's closure runs; a drain continues after it.
        case finishing(CallID, oneway: Bool, then: AfterDrain)
        /// Reading what has arrived, without waiting (``Action/readAvailable``).
        case readingAvailable
        /// Waiting for bytes; the idle timer fires at `idleDeadline` (session time).
        case reading(idleDeadline: Duration)
        /// The next action is `.close(reason)`.
        case closing(CloseReason)
        /// Closed: no more events.
        case closed(CloseReason)
    }

    /// What a drain of the started calls leads to.
    enum AfterDrain: Equatable {
        /// Decode the next message (the drain was for ``ClientConnection/maxStartedCalls``).
        case decode
        /// Handle this call, which ``CallHandler/begin(_:)`` declined.
        case handle(CallID, VarlinkCall)
        /// Wait for bytes (nothing complete is buffered).
        case read
        /// Send `finalReply` if the client is still there, then close.
        case close(CloseReason, finalReply: VarlinkReply?)
    }
}
