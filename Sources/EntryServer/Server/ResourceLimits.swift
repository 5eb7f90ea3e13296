@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// Process resource limits (getrlimit(2)).
package enum ResourceLimits {
    /// Raises the soft limit of open files (RLIMIT_NOFILE) as far as the hard
    /// limit allows, so that `max-connections` clients (one descriptor each,
    /// plus the database's) can be open at once.
    /// - Returns: the soft limit now in force (descriptors).
    @discardableResult
    package static func raiseOpenFiles() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= UInt64(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}
