import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Framing (Protocol/FrameDecoder.swift), fed as swift-nio's decoder verifier
/// does: whole, several at once, byte by byte, and split at every position.
@Suite struct FrameDecoderTests {
    /// `text` as a message on the wire: its UTF-8 bytes and a NUL.
    static func frame(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

    /// Every complete message the decoder holds now.
    static func drain(_ decoder: inout FrameDecoder) throws -> [[UInt8]] {
        var messages: [[UInt8]] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    /// Messages of several sizes and scripts, an empty one among them.
    static let texts = [
        #"{"method":"org.varlink.service.GetInfo"}"#, "", #"{"a":"中国 🇨🇳"}"#, "x",
        #"{"method":"io.entryd.Entries.Add","parameters":{"fields":{"name":"李雷"}}}"#,
    ]
    static let expected = texts.map { Array($0.utf8) }
    static let stream = texts.flatMap(frame)

    @Test("a whole message comes out without its NUL, then nothing")
    func wholeMessage() throws {
        var decoder = FrameDecoder()
        decoder.append(Self.frame(#"{"method":"x"}"#))
        #expect(try decoder.next() == Array(#"{"method":"x"}"#.utf8))
        #expect(try decoder.next() == nil)
        #expect(!decoder.hasPartialMessage)
    }

    @Test("several messages in one append come out in order, the empty one too")
    func severalInOneAppend() throws {
        var decoder = FrameDecoder()
        decoder.append(Self.stream)
        #expect(try Self.drain(&decoder) == Self.expected)
        #expect(!decoder.hasPartialMessage)
    }

    @Test("fed byte by byte, each message comes out at its NUL and not before")
    func byteByByte() throws {
        var decoder = FrameDecoder()
        var messages: [[UInt8]] = []
        for byte in Self.stream {
            decoder.append([byte])
            let out = try Self.drain(&decoder)
            #expect(out.count == (byte == 0 ? 1 : 0))
            messages += out
        }
        #expect(messages == Self.expected)
    }

    @Test("for every split point of a multi-message stream, the messages come out the same")
    func everySplitPoint() throws {
        for cut in 0...Self.stream.count {
            var decoder = FrameDecoder()
            decoder.append(Self.stream[..<cut])
            var messages = try Self.drain(&decoder)
            decoder.append(Self.stream[cut...])
            messages += try Self.drain(&decoder)
            #expect(messages == Self.expected, "split at \(cut)")
            #expect(!decoder.hasPartialMessage)
        }
    }

    @Test("for every pair of split points (three reads), the messages come out the same")
    func everyPairOfSplitPoints() throws {
        let stream = Array(Self.stream.prefix(60)) + [0]
        var reference = FrameDecoder()
        reference.append(stream)
        let expected = try Self.drain(&reference)
        for first in 0...stream.count {
            for second in first...stream.count {
                var decoder = FrameDecoder()
                var messages: [[UInt8]] = []
                for piece in [stream[..<first], stream[first..<second], stream[second...]] {
                    decoder.append(piece)
                    messages += try Self.drain(&decoder)
                }
                #expect(messages == expected, "split at \(first) and \(second)")
            }
        }
    }

    @Test("a message of exactly the limit passes, at the limit without a NUL it waits")
    func exactlyAtTheLimit() throws {
        var decoder = FrameDecoder(maxMessageBytes: 8)
        decoder.append(Array("12345678".utf8))
        #expect(try decoder.next() == nil)
        #expect(decoder.hasPartialMessage)
        decoder.append([0] + Array("abcdefgh".utf8) + [0])
        #expect(try Self.drain(&decoder) == [Array("12345678".utf8), Array("abcdefgh".utf8)])
    }

    @Test("one byte past the limit is an error at once, without waiting for the NUL, and stays one")
    func onePastTheLimit() throws {
        var decoder = FrameDecoder(maxMessageBytes: 8)
        decoder.append(Self.frame("ok") + Array("12345678".utf8))
        #expect(try decoder.next() == Array("ok".utf8))
        #expect(try decoder.next() == nil)
        decoder.append(Array("9".utf8))
        #expect(throws: FrameDecoder.Failure.messageTooLarge(bytes: 9, limit: 8)) { try decoder.next() }
        decoder.append([0])
        #expect(throws: FrameDecoder.Failure.messageTooLarge(bytes: 9, limit: 8)) { try decoder.next() }
    }

    @Test("an over-limit message fed byte by byte fails on its (limit + 1)th byte, not before")
    func overLimitByteByByte() throws {
        var decoder = FrameDecoder(maxMessageBytes: 16)
        for i in 1...16 {
            decoder.append([UInt8(ascii: "x")])
            #expect(try decoder.next() == nil, "byte \(i)")
        }
        decoder.append([UInt8(ascii: "x")])
        #expect(throws: FrameDecoder.Failure.messageTooLarge(bytes: 17, limit: 16)) { try decoder.next() }
    }

    @Test("the limit counts each message on its own, however many came in one read")
    func limitPerMessage() throws {
        var decoder = FrameDecoder(maxMessageBytes: 4)
        decoder.append(Self.frame("abcd") + Self.frame("efgh") + Self.frame("ijklm"))
        #expect(try decoder.next() == Array("abcd".utf8))
        #expect(try decoder.next() == Array("efgh".utf8))
        #expect(throws: FrameDecoder.Failure.messageTooLarge(bytes: 5, limit: 4)) { try decoder.next() }
    }

    @Test("hasPartialMessage: false when empty or all taken, true while bytes wait for their NUL")
    func partialMessage() throws {
        var decoder = FrameDecoder()
        #expect(!decoder.hasPartialMessage)
        decoder.append(Self.frame("a") + Array("b".utf8))
        #expect(try decoder.next() == Array("a".utf8))
        #expect(decoder.hasPartialMessage)
        #expect(try decoder.next() == nil)
        #expect(decoder.hasPartialMessage)
        decoder.append([0])
        #expect(try decoder.next() == Array("b".utf8))
        #expect(!decoder.hasPartialMessage)
        decoder.append([UInt8]())
        #expect(!decoder.hasPartialMessage)
    }

    @Test("taken bytes are dropped on append: at once when all are taken, else past compactionBytes")
    func compaction() throws {
        var decoder = FrameDecoder()
        // All taken: the next append starts an empty buffer.
        decoder.append(Self.frame("first"))
        _ = try decoder.next()
        decoder.append(Array("ab".utf8))
        #expect(decoder.bufferedBytes == 2)
        #expect(decoder.unconsumedBytes == 2)
        // A small taken prefix before a partial message stays until it grows.
        decoder.append([0] + Array("cd".utf8))
        #expect(try decoder.next() == Array("ab".utf8))
        decoder.append(Array("e".utf8))
        #expect(decoder.bufferedBytes == 6)
        #expect(decoder.unconsumedBytes == 3)
        // Past compactionBytes taken, the partial message moves to the front.
        let filler = Self.frame(String(repeating: "f", count: FrameDecoder.compactionBytes))
        decoder.append([0] + filler + Array("gh".utf8))
        #expect(try Self.drain(&decoder) == [Array("cde".utf8), Array(filler.dropLast())])
        decoder.append(Array("i".utf8) + [0])
        #expect(decoder.bufferedBytes == 4)
        #expect(try decoder.next() == Array("ghi".utf8))
        #expect(!decoder.hasPartialMessage)
    }
}
