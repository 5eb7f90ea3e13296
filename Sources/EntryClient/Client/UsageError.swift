/// A command line's arguments are wrong: what is wrong, in one sentence.
///
/// The exit code is 64 (`EX_USAGE`); the reporter adds the command's usage line
/// (see ``FailureReport``).
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "missing ID".
    public var message: String

    /// A usage error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
