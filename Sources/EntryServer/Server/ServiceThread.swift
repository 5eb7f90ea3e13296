import Foundation

/// A thread a ``DaemonService`` starts in ``DaemonService/start()`` for a loop
/// that lasts until the service stops, and waits for in
/// ``DaemonService/stop(deadline:)``: the loop runs on a named thread of its
/// own, and ``wait(until:)`` returns once it has returned, or at a deadline.
package final class ServiceThread: Sendable {
    /// Signalled once `body` has returned.
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread named `name`.
    /// - Parameter stackSize: the thread's stack in bytes; `nil`: Foundation's default.
    package init(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
            body()
            finished.signal()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Waits until the thread's body has returned, or until `deadline`.
    /// - Returns: whether it returned (false: it still runs at `deadline`).
    @discardableResult
    package func wait(until deadline: ContinuousClock.Instant) -> Bool {
        wait(seconds: (deadline - .now).seconds)
    }

    /// Waits until the thread's body has returned, or for `seconds`.
    /// - Returns: whether it returned (false: it still runs after `seconds`).
    @discardableResult
    package func wait(seconds: Double) -> Bool {
        // Until `seconds` have passed by ContinuousClock, the clock deadlines are
        // set with: a semaphore's timeout (DispatchTime) may end a little early.
        let deadline = ContinuousClock.now + .seconds(max(0, seconds))
        while true {
            let left = (deadline - ContinuousClock.now).seconds
            if finished.wait(timeout: .now() + max(0, left)) == .success { return true }
            if ContinuousClock.now >= deadline { return false }
        }
    }
}
