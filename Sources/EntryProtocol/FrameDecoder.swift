import EntryModel

/// Splits a varlink byte stream into messages.
///
/// Byte layout (varlink.org, "Protocol"): a message is one UTF-8 JSON object
/// followed by one NUL byte (0x00); messages follow each other with nothing in
/// between. A message may arrive in any number of reads and one read may hold
/// many messages.
///
/// Bytes are kept in one buffer with a read index: taking a message moves the
/// index, and the consumed prefix is dropped only on ``append(_:)``, when
/// everything buffered was consumed (no copy) or the prefix reached
/// ``compactionBytes`` (one move of the unconsumed rest). Taking many small
/// messages out of one read therefore costs no copy of the rest per message.
///
/// ### Implementing
/// The limit counts the bytes before the NUL. A message over the limit is an
/// error as soon as the limit is passed, without waiting for its NUL, so a
/// client cannot make the daemon buffer an unbounded message.
package struct FrameDecoder: Sendable {
    /// Largest message accepted, in bytes before the NUL. Default 4 MiB.
    package let maxMessageBytes: Int
    /// Received bytes; those before `start` are consumed.
    private var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte of the message being decoded.
    private var start = 0
    /// Index in `buffer` of the next byte to look at for the NUL
    /// (`start ≤ scanned ≤ buffer.count`); bytes in between hold no NUL.
    private var scanned = 0

    /// Consumed bytes that make ``append(_:)`` move the unconsumed rest to the
    /// front of the buffer, in bytes (64 KiB): each byte is moved at most once
    /// per this many bytes consumed.
    static let compactionBytes = 64 << 10

    /// Why the stream cannot be decoded further.
    package enum Failure: Error, Equatable, Sendable {
        /// A message passed `maxMessageBytes` (`bytes` is how many were seen).
        case messageTooLarge(bytes: Int, limit: Int)
    }

    /// - Parameter maxMessageBytes: the per-message limit in bytes (≥ 1).
    package init(maxMessageBytes: Int = 4 << 20) {
        precondition(maxMessageBytes > 0)
        self.maxMessageBytes = maxMessageBytes
    }

    /// True when bytes of an unfinished message are buffered.
    package var hasPartialMessage: Bool { start < buffer.count }

    /// Bytes buffered and not yet taken by ``next()`` (complete messages and
    /// the partial one, NULs included).
    var unconsumedBytes: Int { buffer.count - start }

    /// Buffer capacity in use, consumed prefix included, in bytes (for tests
    /// of the compaction rule).
    var bufferedBytes: Int { buffer.count }

    /// Appends bytes read from the socket.
    package mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanned = 0
        } else if start >= Self.compactionBytes {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Takes the next complete message (without its NUL), or `nil` if none is complete yet.
    /// - Throws: ``Failure/messageTooLarge(bytes:limit:)`` once the current
    ///   message passes the limit (`bytes` is then `maxMessageBytes + 1`), and
    ///   again on every later call: the stream cannot be resynchronised.
    package mutating func next() throws(Failure) -> [UInt8]? {
        // A NUL at index start + maxMessageBytes still ends a message of exactly the limit.
        let window = min(buffer.count, start + maxMessageBytes + 1)
        if scanned < window, let nul = buffer[scanned..<window].firstIndex(of: 0) {
            let message = Array(buffer[start..<nul])
            start = nul + 1
            scanned = start
            return message
        }
        scanned = max(scanned, window)
        if scanned - start > maxMessageBytes {
            throw .messageTooLarge(bytes: scanned - start, limit: maxMessageBytes)
        }
        return nil
    }
}
