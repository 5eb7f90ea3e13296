import EntryModel

/// Splits a varlink byte stream into messages.
///
/// Byte layout (varlink.org, "Protocol"): a message is one UTF-8 JSON object
/// followed by one NUL byte (0x00); messages follow each other with nothing in
/// between. A message may arrive in any number of reads and one read may hold
/// many messages.
///
/// ### Implementing
/// The limit counts the bytes before the NUL. A message over the limit is an
/// error as soon as the limit is passed, without waiting for its NUL, so a
/// client cannot make the daemon buffer an unbounded message.
public struct FrameDecoder: Sendable {
    /// Largest message accepted, in bytes before the NUL. Default 4 MiB.
    public let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    private var scanned = 0

    /// Why the stream cannot be decoded further.
    public enum Failure: Error, Equatable, Sendable {
        /// A message passed `maxMessageBytes` (`bytes` is how many were seen).
        case messageTooLarge(bytes: Int, limit: Int)
    }

    /// - Parameter maxMessageBytes: the per-message limit in bytes (≥ 1).
    public init(maxMessageBytes: Int = 4 << 20) {
        precondition(maxMessageBytes > 0)
        self.maxMessageBytes = maxMessageBytes
    }

    /// True when bytes of an unfinished message are buffered.
    public var hasPartialMessage: Bool { !buffer.isEmpty }

    /// Appends bytes read from the socket.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// Takes the next complete message (without its NUL), or `nil` if none is complete yet.
    /// - Throws: ``Failure/messageTooLarge(bytes:limit:)`` once the current message passes the limit.
    public mutating func next() throws(Failure) -> [UInt8]? {
        while scanned < buffer.count {
            if buffer[scanned] == 0 {
                let message = Array(buffer[0..<scanned])
                buffer.removeSubrange(0...scanned)
                scanned = 0
                return message
            }
            scanned += 1
            if scanned > maxMessageBytes {
                throw .messageTooLarge(bytes: scanned, limit: maxMessageBytes)
            }
        }
        return nil
    }
}
