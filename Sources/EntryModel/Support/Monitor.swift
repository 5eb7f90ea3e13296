import Foundation

/// State behind a lock, with a condition its waiters sleep on until another
/// thread changes the state (a monitor): for state a thread waits on, where
/// ``Synchronization/Mutex`` (which cannot wait) does not do. Thread-safe.
///
/// Every access runs inside ``withLock(wake:_:)`` or
/// ``withLock(waitingUntil:while:_:)``; a change waiters look at wakes them
/// (`wake:`).
package final class Monitor<State>: @unchecked Sendable {
    // @unchecked: `state` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var state: State

    /// Whom a change wakes.
    package enum Wake {
        /// No waiter: the change is nothing a waiter looks at.
        case none
        /// One waiter (`NSCondition.signal()`), e.g. for one item put back.
        case one
        /// Every waiter (`NSCondition.broadcast()`).
        case all
    }

    /// A monitor holding `state`.
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` on the state with the lock held, then wakes `wake`.
    /// - Returns: what `body` returns.
    package func withLock<R>(wake: Wake = .none, _ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            switch wake {
            case .none: break
            case .one: condition.signal()
            case .all: condition.broadcast()
            }
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits while `blocked` holds for the state (each time a change wakes
    /// this thread), or until `deadline` when one is given, then runs `body`
    /// on the state, all with the lock held but while waiting.
    /// - Returns: what `body` returns; at a deadline `blocked` may still hold.
    package func withLock<R>(waitingUntil deadline: Date? = nil, while blocked: (State) -> Bool,
                             _ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        while blocked(state) {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return try body(&state)
    }
}
