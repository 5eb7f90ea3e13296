/// A service stopped by its deadline but left something unfinished (sessions
/// still busy, a sync still running): the runner logs it and entryd exits 1.
struct StopIncomplete: Error, CustomStringConvertible {
    /// What was left, e.g. `2 session(s) still busy after 10 s; closing anyway`.
    let description: String
}
