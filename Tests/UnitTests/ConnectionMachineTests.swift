import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The session's protocol rules (Server/ConnectionMachine.swift), driven without
/// sockets: each test feeds events with the time it chooses (a `Duration`
/// since the session began) and checks the exact actions that come back.
@Suite struct ConnectionMachineTests {
    static let limits: Limits = {
        var limits = Limits()
        limits.idleTimeoutSeconds = 300
        limits.maxMessageBytes = 256
        return limits
    }()
    static let idle = Duration.seconds(300)

    static func add(_ name: String, oneway: Bool = false) -> VarlinkCall {
        VarlinkCall(method: "io.entryd.Entries.Add", parameters: .object([("name", .string(name))]), oneway: oneway)
    }
    static let get = VarlinkCall(method: "io.entryd.Entries.Get", parameters: .object([("id", .string("x"))]))
    static let changes = VarlinkCall(
        method: "io.entryd.Sync.Changes", parameters: .object([("since", .string("0"))]), more: true)
    static func reply(_ text: String, continues: Bool = false) -> VarlinkReply {
        VarlinkReply(parameters: .object([("r", .string(text))]), continues: continues)
    }
    static let invalid = WireError.validationFailed([])

    /// The wire bytes of `calls`, one after another.
    static func wire(_ calls: VarlinkCall...) -> [UInt8] { calls.flatMap(\.encoded) }

    /// A machine that has started and is reading (at time 0).
    static func reading(maxStartedCalls: Int = ClientConnection.maxStartedCalls) -> ConnectionMachine {
        var machine = ConnectionMachine(limits: limits, maxStartedCalls: maxStartedCalls)
        #expect(machine.next(now: .zero) == .read(timeout: idle))
        return machine
    }

    @Test("idle timeout: fires when the limit is reached and not before; bytes and answered calls re-arm it")
    func idleTimeout() {
        var m = Self.reading()
        #expect(m.tick(now: .seconds(299)) == .read(timeout: .seconds(1)))
        // A partial message is activity: the timer starts again.
        #expect(m.bytesRead(Array(#"{"meth"#.utf8), now: .seconds(299)) == .read(timeout: Self.idle))
        #expect(m.tick(now: .milliseconds(598_500)) == .read(timeout: .milliseconds(500)))
        #expect(
            m.bytesRead(Array(#"od":"io.entryd.Entries.Get"}"#.utf8) + [0], now: .milliseconds(598_900))
                == .begin(0, VarlinkCall(method: "io.entryd.Entries.Get")))
        #expect(
            m.callBegun(0, .declined, now: .milliseconds(598_900))
                == .handle(0, VarlinkCall(method: "io.entryd.Entries.Get")))
        #expect(m.reply(Self.reply("got"), from: 0) == .send(startsStream: false))
        // The timer does not run while a call runs; it is armed when the call is answered.
        #expect(m.callCompleted(0, error: nil, now: .seconds(5000)) == .read(timeout: Self.idle))
        #expect(m.tick(now: .seconds(5299)) == .read(timeout: .seconds(1)))
        #expect(m.tick(now: .seconds(5300)) == .close(.idleTimeout))
    }

    @Test(
        "pipelining: three calls in one read are begun in order and answered in call order, even when a later call's outcome is known first"
    )
    func pipeliningOrder() {
        var m = Self.reading()
        let (a, b, c) = (Self.add("a"), Self.add("b"), Self.add("c"))
        #expect(m.bytesRead(Self.wire(a, b, c), now: .seconds(1)) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .seconds(1)) == .begin(1, b))
        // Call 1's begin throws at once (refused before the writer): its error waits its turn.
        #expect(m.callBegun(1, .failed(Self.invalid), now: .seconds(1)) == .begin(2, c))
        // Nothing more buffered: the started calls are finished in call order.
        #expect(m.callBegun(2, .started, now: .seconds(1)) == .finish(0))
        #expect(m.reply(Self.reply("a"), from: 0) == .send(startsStream: false))
        #expect(m.callCompleted(0, error: nil, now: .seconds(2)) == .send(VarlinkReply(error: Self.invalid)))
        #expect(m.next(now: .seconds(2)) == .finish(2))
        #expect(m.reply(Self.reply("c"), from: 2) == .send(startsStream: false))
        #expect(m.callCompleted(2, error: nil, now: .seconds(2)) == .read(timeout: Self.idle))
    }

    @Test("pipelining: a call begin declines is handled only after every earlier started call is answered")
    func declinedCallWaits() {
        var m = Self.reading()
        let a = Self.add("a")
        #expect(m.bytesRead(Self.wire(a, Self.get, a), now: .zero) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .zero) == .begin(1, Self.get))
        #expect(m.callBegun(1, .declined, now: .zero) == .finish(0))
        #expect(m.reply(Self.reply("a"), from: 0) == .send(startsStream: false))
        #expect(m.callCompleted(0, error: nil, now: .zero) == .handle(1, Self.get))
        #expect(
            m.callCompleted(1, error: .entryNotFound("x"), now: .zero)
                == .send(VarlinkReply(error: .entryNotFound("x"))))
        #expect(m.next(now: .zero) == .begin(2, a))
        #expect(m.callBegun(2, .started, now: .zero) == .finish(2))
        #expect(
            m.callCompleted(2, error: .storageFailed("busy"), now: .zero)
                == .send(VarlinkReply(error: .storageFailed("busy"))))
        #expect(m.next(now: .zero) == .read(timeout: Self.idle))
    }

    @Test(
        "pipelining: when started calls wait and the buffer ends in part of a message, what has arrived is read without waiting first"
    )
    func partialMessageIsReadOnBeforeFinishing() {
        var m = Self.reading()
        let (a, b, c) = (Self.add("a"), Self.add("b"), Self.add("c"))
        let second = Self.wire(b)
        // Call a and the first half of b: a is begun, then the rest of b is asked for without waiting.
        #expect(m.bytesRead(Self.wire(a) + second.prefix(10), now: .zero) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .zero) == .readAvailable)
        // More of b, still not all of it: ask again.
        #expect(m.bytesArrived(second.dropFirst(10).prefix(5), now: .zero) == .readAvailable)
        // The rest of b and all of c: both are begun while a waits.
        #expect(m.bytesArrived(second.dropFirst(15) + Self.wire(c), now: .zero) == .begin(1, b))
        #expect(m.callBegun(1, .started, now: .zero) == .begin(2, c))
        // Nothing buffered after c: no read without waiting, the started calls are finished in order.
        #expect(m.callBegun(2, .started, now: .zero) == .finish(0))
        #expect(m.callCompleted(0, error: nil, now: .zero) == .finish(1))
        #expect(m.callCompleted(1, error: nil, now: .zero) == .finish(2))
        #expect(m.callCompleted(2, error: nil, now: .zero) == .read(timeout: Self.idle))
        // Part of a message with nothing started: an ordinary (waiting) read, no read without waiting.
        #expect(m.bytesRead(Array(Self.wire(a).prefix(7)), now: .seconds(1)) == .read(timeout: Self.idle))
        // Nothing arrived while a started call waits: it is finished, then the session waits for bytes.
        #expect(m.bytesRead(Self.wire(a).dropFirst(7) + second.prefix(3), now: .seconds(1)) == .begin(3, a))
        #expect(m.callBegun(3, .started, now: .seconds(1)) == .readAvailable)
        #expect(m.bytesArrived([UInt8](), now: .seconds(1)) == .finish(3))
        #expect(m.callCompleted(3, error: nil, now: .seconds(2)) == .read(timeout: Self.idle))
    }

    @Test("pipelining: once maxStartedCalls are started they are finished before the next message is decoded")
    func startedCallsAreCapped() {
        var m = Self.reading(maxStartedCalls: 2)
        let (a, b, c) = (Self.add("a"), Self.add("b"), Self.add("c"))
        #expect(m.bytesRead(Self.wire(a, b, c), now: .zero) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .zero) == .begin(1, b))
        #expect(m.callBegun(1, .started, now: .zero) == .finish(0))
        #expect(m.callCompleted(0, error: nil, now: .zero) == .finish(1))
        #expect(m.callCompleted(1, error: nil, now: .zero) == .begin(2, c))
        #expect(m.callBegun(2, .started, now: .zero) == .finish(2))
        #expect(m.callCompleted(2, error: nil, now: .zero) == .read(timeout: Self.idle))
        #expect(ClientConnection.maxStartedCalls == 256)
    }

    @Test(
        "streaming with more: replies with continues go out as sent, the first one starts the stream once per connection, then the end"
    )
    func streaming() {
        var m = Self.reading()
        #expect(m.bytesRead(Self.wire(Self.changes), now: .zero) == .begin(0, Self.changes))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, Self.changes))
        #expect(m.reply(Self.reply("page 1", continues: true), from: 0) == .send(startsStream: true))
        #expect(m.reply(Self.reply("page 2", continues: true), from: 0) == .send(startsStream: false))
        #expect(m.reply(Self.reply("end"), from: 0) == .send(startsStream: false))
        #expect(m.callCompleted(0, error: nil, now: .seconds(10)) == .read(timeout: Self.idle))
        // A second stream on the same connection: onStream has already run.
        #expect(m.bytesRead(Self.wire(Self.changes), now: .seconds(11)) == .begin(1, Self.changes))
        #expect(m.callBegun(1, .declined, now: .seconds(11)) == .handle(1, Self.changes))
        #expect(m.reply(Self.reply("page 1", continues: true), from: 1) == .send(startsStream: false))
    }

    @Test(
        "shutdown: a running stream is told to stop, ends with its last reply, and the session closes instead of reading"
    )
    func shutdownStopsStream() {
        var m = Self.reading()
        #expect(m.bytesRead(Self.wire(Self.changes), now: .zero) == .begin(0, Self.changes))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, Self.changes))
        #expect(m.reply(Self.reply("page 1", continues: true), from: 0) == .send(startsStream: true))
        #expect(m.shutdownRequested() == .stopStreaming)
        #expect(m.reply(Self.reply("end"), from: 0) == .send(startsStream: false))
        #expect(m.callCompleted(0, error: nil, now: .seconds(1)) == .close(.shutdown))
    }

    @Test(
        "shutdown: the running call and the calls already buffered are answered, then close; while reading, close at once"
    )
    func shutdownDrains() {
        var m = Self.reading()
        #expect(m.bytesRead(Self.wire(Self.get, Self.get), now: .zero) == .begin(0, Self.get))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, Self.get))
        #expect(m.shutdownRequested() == .drain)
        #expect(m.reply(Self.reply("0"), from: 0) == .send(startsStream: false))
        #expect(m.callCompleted(0, error: nil, now: .zero) == .begin(1, Self.get))
        #expect(m.callBegun(1, .declined, now: .zero) == .handle(1, Self.get))
        #expect(m.callCompleted(1, error: nil, now: .zero) == .close(.shutdown))

        var idle = Self.reading()
        #expect(idle.shutdownRequested() == .drain)
        #expect(idle.next(now: .seconds(1)) == .close(.shutdown))
        // The read side ended by the shutdown reads as end of input: the same close.
        var ended = Self.reading()
        #expect(ended.shutdownRequested() == .drain)
        #expect(ended.inputEnded(now: .seconds(1)) == .close(.shutdown))
    }

    @Test("oneway: no reply and no error reply, whether handled, started or refused at begin")
    func oneway() {
        var m = Self.reading()
        let get = VarlinkCall(method: "io.entryd.Entries.Get", oneway: true)
        let (a, b) = (Self.add("a", oneway: true), Self.add("b", oneway: true))
        #expect(m.bytesRead(Self.wire(get, a, b), now: .zero) == .begin(0, get))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, get))
        #expect(m.reply(Self.reply("ignored"), from: 0) == .discard)
        #expect(m.callCompleted(0, error: .entryNotFound("x"), now: .zero) == .begin(1, a))
        #expect(m.callBegun(1, .failed(Self.invalid), now: .zero) == .begin(2, b))
        #expect(m.callBegun(2, .started, now: .zero) == .finish(2))
        #expect(m.reply(Self.reply("ignored", continues: true), from: 2) == .discard)
        #expect(m.callCompleted(2, error: Self.invalid, now: .zero) == .read(timeout: Self.idle))
    }

    @Test(
        "a message that is not a call gets its InvalidParameter after the earlier replies, then the session closes",
        arguments: [
            ("[1,2]", "method"), ("not json", "method"), (#"{"parameters":{}}"#, "method"),
            (#"{"method":""}"#, "method"),
            (#"{"method":5}"#, "method"), (#"{"method":"a.B","parameters":[]}"#, "parameters"),
            (#"{"method":"a.B","more":"yes"}"#, "more"),
        ])
    func undecodableMessage(text: String, parameter: String) {
        var m = Self.reading()
        let a = Self.add("a")
        // The valid call after the bad message is never begun.
        #expect(m.bytesRead(Self.wire(a) + Array(text.utf8) + [0] + Self.wire(Self.get), now: .zero) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .zero) == .finish(0))
        #expect(m.reply(Self.reply("a"), from: 0) == .send(startsStream: false))
        #expect(m.callCompleted(0, error: nil, now: .zero) == .send(VarlinkReply(error: .invalidParameter(parameter))))
        #expect(m.next(now: .zero) == .close(.undecodableMessage))
    }

    @Test("wrong parameter types: the call's InvalidParameter is sent and the session reads on")
    func wrongParameterTypeKeepsConnection() {
        var m = Self.reading()
        #expect(m.bytesRead(Self.wire(Self.changes), now: .zero) == .begin(0, Self.changes))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, Self.changes))
        #expect(
            m.callCompleted(0, error: .invalidParameter("since"), now: .zero)
                == .send(VarlinkReply(error: .invalidParameter("since"))))
        #expect(m.next(now: .zero) == .read(timeout: Self.idle))
    }

    @Test(
        "an oversized message gets LimitExceeded(max-message-size) as soon as it passes the limit, after the earlier replies, then close"
    )
    func oversizedMessage() {
        var m = Self.reading()
        let a = Self.add("a")
        let head = Self.wire(a)
        // Exactly the limit without its NUL: still waiting.
        #expect(m.bytesRead(head + [UInt8](repeating: 0x20, count: 256), now: .zero) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .zero) == .readAvailable)
        #expect(m.bytesArrived([UInt8](), now: .zero) == .finish(0))
        #expect(m.callCompleted(0, error: nil, now: .zero) == .read(timeout: Self.idle))
        // One byte more, no NUL in sight: refused at once.
        let refusal = VarlinkReply(error: .limitExceeded("max-message-size", maximum: 256))
        #expect(m.bytesRead([0x20], now: .seconds(1)) == .send(refusal))
        #expect(m.next(now: .seconds(1)) == .close(.messageTooLarge))
    }

    @Test("hang-up: bytes without a closing NUL get no reply; a hang-up between calls closes quietly")
    func hangUp() {
        var m = Self.reading()
        #expect(
            m.bytesRead(Array(#"{"method":"org.varlink.service.GetInfo""#.utf8), now: .zero)
                == .read(timeout: Self.idle))
        #expect(m.inputEnded(now: .seconds(1)) == .close(.clientHungUp(midMessage: true)))
        var clean = Self.reading()
        #expect(clean.inputEnded(now: .seconds(1)) == .close(.clientHungUp(midMessage: false)))
        var failed = Self.reading()
        #expect(failed.readFailed(now: .seconds(1)) == .close(.readFailed))
    }

    @Test(
        "a client that stops reading: once a write fails (send timeout), nothing more is written, started calls are finished silently, then close"
    )
    func clientStopsReading() {
        #expect(ClientConnection.sendTimeout == .seconds(30))
        var m = Self.reading()
        let (a, b, c) = (Self.add("a"), Self.add("b"), Self.add("c"))
        #expect(m.bytesRead(Self.wire(a, b, c, Self.get), now: .zero) == .begin(0, a))
        #expect(m.callBegun(0, .started, now: .zero) == .begin(1, b))
        #expect(m.callBegun(1, .failed(Self.invalid), now: .zero) == .begin(2, c))
        #expect(m.callBegun(2, .started, now: .zero) == .begin(3, Self.get))
        #expect(m.callBegun(3, .declined, now: .zero) == .finish(0))
        #expect(m.reply(Self.reply("a"), from: 0) == .send(startsStream: false))
        m.writeFailed()  // the write blocked for the send timeout
        // Call 1's error is not sent; call 2 is still finished (its write is queued), without a reply.
        #expect(
            m.callCompleted(0, error: .storageFailed("internal error; see the daemon log"), now: .seconds(30))
                == .finish(2))
        #expect(m.reply(Self.reply("c"), from: 2) == .clientGone)
        // The declined call 3 was read whole: it still runs, its reply discarded, then the session closes.
        #expect(m.callCompleted(2, error: nil, now: .seconds(30)) == .handle(3, Self.get))
        #expect(m.reply(Self.reply("got"), from: 3) == .clientGone)
        #expect(m.callCompleted(3, error: .entryNotFound("x"), now: .seconds(30)) == .readAvailable)
        #expect(m.bytesArrived([UInt8](), now: .seconds(30)) == .close(.clientGone))
    }

    @Test(
        "a client that hangs up after a call and a oneway write: the write still runs whatever the call before it; a stream call is skipped"
    )
    func hangUpKeepsBufferedCalls() {
        let oneway = Self.add("w", oneway: true)
        // [Get, oneway Add], then the client closes: the Get's reply cannot be written.
        var m = Self.reading()
        #expect(m.bytesRead(Self.wire(Self.get, oneway), now: .zero) == .begin(0, Self.get))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, Self.get))
        #expect(m.reply(Self.reply("got"), from: 0) == .send(startsStream: false))
        m.writeFailed()
        #expect(m.callCompleted(0, error: nil, now: .zero) == .begin(1, oneway))
        #expect(m.callBegun(1, .started, now: .zero) == .readAvailable)
        #expect(m.bytesArrived([UInt8](), now: .zero) == .finish(1))
        #expect(m.callCompleted(1, error: nil, now: .zero) == .close(.clientGone))
        // The oneway write still on its way when the Get's reply failed: read without waiting, then run.
        var late = Self.reading()
        #expect(late.bytesRead(Self.wire(Self.get), now: .zero) == .begin(0, Self.get))
        #expect(late.callBegun(0, .declined, now: .zero) == .handle(0, Self.get))
        late.writeFailed()
        #expect(late.callCompleted(0, error: nil, now: .zero) == .readAvailable)
        #expect(late.bytesArrived(Self.wire(oneway), now: .zero) == .begin(1, oneway))
        #expect(late.callBegun(1, .started, now: .zero) == .readAvailable)
        #expect(late.bytesArrived([UInt8](), now: .zero) == .finish(1))
        #expect(late.callCompleted(1, error: nil, now: .zero) == .close(.clientGone))
        // The same after an Add (started): as before, the oneway write runs too.
        var a = Self.reading()
        #expect(a.bytesRead(Self.wire(Self.add("a"), oneway), now: .zero) == .begin(0, Self.add("a")))
        #expect(a.callBegun(0, .started, now: .zero) == .begin(1, oneway))
        #expect(a.callBegun(1, .started, now: .zero) == .finish(0))
        a.writeFailed()
        #expect(a.reply(Self.reply("a"), from: 0) == .clientGone)
        #expect(a.callCompleted(0, error: nil, now: .zero) == .finish(1))
        #expect(a.callCompleted(1, error: nil, now: .zero) == .readAvailable)
        #expect(a.bytesArrived([UInt8](), now: .zero) == .close(.clientGone))
        // A Changes stream read after the client left is not started (nobody would read it); the Get after it runs.
        var c = Self.reading()
        #expect(c.bytesRead(Self.wire(Self.get, Self.changes, Self.get), now: .zero) == .begin(0, Self.get))
        #expect(c.callBegun(0, .declined, now: .zero) == .handle(0, Self.get))
        c.writeFailed()
        #expect(c.callCompleted(0, error: nil, now: .zero) == .begin(2, Self.get))
        #expect(c.callBegun(2, .declined, now: .zero) == .handle(2, Self.get))
        #expect(c.callCompleted(2, error: nil, now: .zero) == .readAvailable)
        #expect(c.bytesArrived([UInt8](), now: .zero) == .close(.clientGone))
    }

    @Test(
        "a client that stops reading during a stream, or before an error reply: the session closes without serving more"
    )
    func clientStopsReadingStream() {
        var m = Self.reading()
        #expect(m.bytesRead(Self.wire(Self.changes, Self.get), now: .zero) == .begin(0, Self.changes))
        #expect(m.callBegun(0, .declined, now: .zero) == .handle(0, Self.changes))
        #expect(m.reply(Self.reply("page 1", continues: true), from: 0) == .send(startsStream: true))
        m.writeFailed()
        #expect(m.reply(Self.reply("end"), from: 0) == .clientGone)
        #expect(m.callCompleted(0, error: .storageFailed("x"), now: .seconds(31)) == .begin(1, Self.get))
        #expect(m.callBegun(1, .declined, now: .seconds(31)) == .handle(1, Self.get))
        #expect(m.callCompleted(1, error: nil, now: .seconds(31)) == .readAvailable)
        #expect(m.bytesArrived([UInt8](), now: .seconds(31)) == .close(.clientGone))

        var e = Self.reading()
        #expect(e.bytesRead(Self.wire(Self.get, Self.get), now: .zero) == .begin(0, Self.get))
        #expect(e.callBegun(0, .declined, now: .zero) == .handle(0, Self.get))
        #expect(
            e.callCompleted(0, error: .entryNotFound("x"), now: .zero)
                == .send(VarlinkReply(error: .entryNotFound("x"))))
        e.writeFailed()
        // The second Get was read whole: it runs, its reply discarded.
        #expect(e.next(now: .seconds(30)) == .begin(1, Self.get))
        #expect(e.callBegun(1, .declined, now: .seconds(30)) == .handle(1, Self.get))
        #expect(e.callCompleted(1, error: nil, now: .seconds(30)) == .readAvailable)
        #expect(e.bytesArrived([UInt8](), now: .seconds(30)) == .close(.clientGone))
    }

    @Test("close reasons keep the daemon's debug log texts")
    func closeLogTexts() {
        #expect(ConnectionMachine.CloseReason.idleTimeout.logText(idleTimeoutSeconds: 300) == "idle for 300s, closing")
        #expect(
            ConnectionMachine.CloseReason.messageTooLarge.logText(idleTimeoutSeconds: 300)
                == "message over max-message-size, closing")
        #expect(
            ConnectionMachine.CloseReason.undecodableMessage.logText(idleTimeoutSeconds: 300)
                == "undecodable message, closing")
        #expect(
            ConnectionMachine.CloseReason.clientHungUp(midMessage: true).logText(idleTimeoutSeconds: 300)
                == "client hung up mid-message")
        #expect(ConnectionMachine.CloseReason.clientHungUp(midMessage: false).logText(idleTimeoutSeconds: 300) == nil)
        #expect(ConnectionMachine.CloseReason.clientGone.logText(idleTimeoutSeconds: 300) == nil)
    }

    @Test("socket timeouts are whole milliseconds, rounded up, never 0 (which would mean none)")
    func socketTimeoutMilliseconds() {
        #expect(ClientConnection.milliseconds(.seconds(300)) == 300_000)
        #expect(ClientConnection.milliseconds(.milliseconds(1500)) == 1500)
        #expect(ClientConnection.milliseconds(.microseconds(1500)) == 2)
        #expect(ClientConnection.milliseconds(.nanoseconds(1)) == 1)
        #expect(ClientConnection.milliseconds(.zero) == 1)
    }
}
