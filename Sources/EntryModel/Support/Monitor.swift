import Foundation

/// State behind a lock, with a condition its waiters sleep on until another
/// thread changes the state (a monitor): for state a thread waits on, where
/// ``Synchronization/Mutex`` (which cannot wait) does not do. Thread-safe.
///
/// Every access runs inside a `withLock`: one that waits first
/// (`waitingUntil:while:`) or not; a change waiters look at wakes them
/// (`wake:`, or `waking:` when whom to wake depends on the state left).
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
        try withLock(waking: { _ in wake }, body)
    }

    /// Runs `body` on the state with the lock held, then wakes whom `wake`
    /// says for the state `body` left.
    /// - Returns: what `body` returns.
    package func withLock<R>(waking wake: (State) -> Wake, _ body: (inout State) throws -> R) rethrows -> R {
        try withLock(waitingUntil: { _ in nil }, while: { _ in false }, waking: wake, body)
    }

    /// Waits while `blocked` holds for the state (each time a change wakes
    /// this thread), or until `deadline` when one is given, then runs `body`
    /// on the state, all with the lock held but while waiting.
    /// - Returns: what `body` returns; at a deadline `blocked` may still hold.
    package func withLock<R>(
        waitingUntil deadline: Date? = nil, while blocked: (State) -> Bool,
        _ body: (inout State) throws -> R
    ) rethrows -> R {
        try withLock(waitingUntil: { _ in deadline }, while: blocked, waking: { _ in .none }, body)
    }

    /// Waits while `blocked` holds for the state, each time until the
    /// deadline `deadline` gives for the state then (`nil`: none), then runs
    /// `body` on the state and wakes whom `wake` says for the state `body`
    /// left, all with the lock held but while waiting.
    /// - Returns: what `body` returns; at a deadline `blocked` may still hold.
    package func withLock<R>(
        waitingUntil deadline: (State) -> Date?, while blocked: (State) -> Bool,
        waking wake: (State) -> Wake, _ body: (inout State) throws -> R
    ) rethrows -> R {
        condition.lock()
        defer {
            switch wake(state) {
            case .none: break
            case .one: condition.signal()
            case .all: condition.broadcast()
            }
            condition.unlock()
        }
        while blocked(state) {
            if let until = deadline(state) {
                if !condition.wait(until: until) { break }
            } else {
                condition.wait()
            }
        }
        return try body(&state)
    }
}
