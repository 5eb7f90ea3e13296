import EntryModel

/// How the gateway reaches entryd: calls over its socket (entryd-web pools
/// connections; the tests can stand in another).
package protocol DaemonLink: Sendable {
    /// Calls `method` with `parameters` and returns the reply parameters.
    /// - Throws: `WireError` for an error reply; ``DaemonLinkError`` when
    ///   entryd cannot be reached or the connection broke.
    func call(_ method: String, _ parameters: JSON) throws -> JSON
    /// Calls `method` with `more` on a connection of its own and returns its replies.
    /// - Throws: as ``call(_:_:)``, for the first reply.
    func stream(_ method: String, _ parameters: JSON) throws -> any ReplySource
}

/// The replies of a call made with `more`.
package protocol ReplySource: AnyObject, Sendable {
    /// The next reply's parameters, or nil when none came within the idle
    /// interval (the caller sends a keep-alive and asks again).
    /// - Throws: `WireError` for an error reply; ``DaemonLinkError`` when the
    ///   connection ends.
    func next() throws -> JSON?
    /// Closes the connection.
    func close()
}

/// entryd could not be reached, or the connection broke during a call: the
/// gateway answers 503 `io.entryd.web.DaemonUnreachable`.
package struct DaemonLinkError: Error, Sendable, CustomStringConvertible {
    /// What failed, for the log (the socket path and the system error).
    package var reason: String
    /// - Parameter reason: what failed, for the log.
    package init(reason: String) { self.reason = reason }
    /// "entryd unreachable: REASON".
    package var description: String { "entryd unreachable: \(reason)" }
}
