import EntryProtocol

/// A start-up step that failed: the exit status and the line to log.
struct StartupFailure: Error, CustomStringConvertible {
    /// The status entryd exits with.
    let exitCode: ExitCode
    /// One line for the log, naming the path and what to do.
    let message: String

    /// A failure exiting with `exitCode` and logging `message`.
    init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    /// The message.
    var description: String { message }
}
