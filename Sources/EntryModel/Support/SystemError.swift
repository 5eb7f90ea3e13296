@preconcurrency import Glibc

/// A failed system call, with the call's name and `errno` (see errno(3)).
package struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed, e.g. `connect`.
    package let call: String
    /// The `errno` value the call left (e.g. `ECONNREFUSED`).
    package let errno: Int32
    /// Extra context (a path), may be empty.
    package let detail: String

    /// Captures the failure of `call`; `errno` defaults to the current thread's value,
    /// so build it right after the failing call.
    package init(_ call: String, errno: Int32 = Glibc.errno, detail: String = "") {
        self.call = call
        self.errno = errno
        self.detail = detail
    }

    /// `CALL: strerror text`, or `CALL 'DETAIL': strerror text` when there is a detail.
    package var description: String {
        let reason = String(cString: strerror(errno))
        return detail.isEmpty ? "\(call): \(reason)" : "\(call) '\(detail)': \(reason)"
    }
}
