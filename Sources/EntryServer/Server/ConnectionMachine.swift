import EntryModel
import EntryProtocol

/// The protocol rules of one client connection, without sockets, threads or
/// clocks: ``ClientConnection`` reads, feeds events here, and executes the
/// ``Action`` each event returns (the shape of swift-nio's and Hummingbird's
/// connection state machines).
///
/// Time is a `Duration` since the session began, on a monotonic clock, passed
/// in with every event that may arm or check the idle timer (`now:`); the
/// machine never reads a clock, so tests drive it with the times they choose.
///
/// The rules (doc/protocol.md):
/// - **Pipelining.** Messages are decoded one at a time from what was read.
///   Each call is first offered to ``CallHandler/begin(_:)``: calls it starts
///   (Add, Import: queued to the writer) overlap and are finished later,
///   in call order, when the buffered messages run out (after one more read
///   without waiting when the buffer ends in part of a message, so a large
///   call is begun while the earlier ones are stored), before a call that
///   was not started, or once ``ClientConnection/maxStartedCalls`` are started. A call
///   it declines is handled once every earlier call is answered, so it sees
///   their effects. Replies thus leave in call order, even when a later call's
///   outcome (a `begin` that threw) is known before an earlier one's.
/// - **Replies.** A oneway call gets no reply, not even an error. The first
///   reply with `continues` on a connection starts a stream (``ReplyAction``).
///   Once a write fails the client is gone: nothing more is written, but what
///   has already arrived is still read (without waiting) and its complete
///   calls run, in order, their replies discarded (a call with `more`
///   excepted: nobody would read its stream), so what a client sent before it
///   hung up is never dropped for the kind of call before it; then the
///   session closes.
/// - **Bad messages.** A message over `max-message-size` gets
///   `LimitExceeded(max-message-size)`, one that is not a call gets
///   `InvalidParameter(method)` (or `parameters`, `more`, `oneway`), each
///   after the earlier calls' replies, and the session closes. Bytes without
///   a closing NUL when the client hangs up get no reply.
/// - **Idle timeout.** While waiting for bytes the session closes after
///   `idle-timeout` without one; any bytes re-arm it. It does not run while
///   a call runs (an open `Changes` stream is exempt).
/// - **Shutdown.** No more reading: the running and buffered calls are
///   answered, a running stream is told to stop, then the session closes.
///
/// Feeding an event that does not fit the state (a call's outcome when no
/// call runs, anything after `.close`) is a programmer error and traps.
struct ConnectionMachine {
    /// A call started by ``CallHandler/begin(_:)`` and not yet answered.
    private struct StartedCall {
        let id: CallID
        let oneway: Bool
        /// The error `begin` threw (the call's reply), or `nil` when its closure
        /// is to be run.
        let failure: WireError?
    }

    /// Where the connection is (ConnectionMachine+State.swift). It starts by
    /// decoding; nothing is buffered yet, so the first action is a read.
    private(set) var state: State = .decoding
    /// The bytes read and not yet taken as messages.
    private var decoder: FrameDecoder
    /// Started calls in call order; those before `startedHead` are answered
    /// (an index, so answering one does not move the rest).
    private var started: [StartedCall] = []
    /// Index in `started` of the oldest call not yet answered.
    private var startedHead = 0
    /// The id the next decoded call gets.
    private var nextCallID: CallID = 0
    /// Most calls started before they are finished (``ClientConnection/maxStartedCalls``).
    let maxStartedCalls: Int
    /// `idle-timeout`.
    let idleTimeout: Duration
    /// A write failed: nothing more is written.
    private(set) var clientGone = false
    /// A reply with `continues` was sent on this connection (`onStream` ran).
    private(set) var streamStarted = false
    /// The running call has sent a reply with `continues` and not ended.
    private var runningCallStreams = false
    /// Shutdown was requested: the session closes instead of reading.
    private(set) var stopping = false

    /// A machine for a new connection, about to read.
    /// - Parameters:
    ///   - limits: `maxMessageBytes` (bytes before the NUL) and
    ///     `idleTimeoutSeconds` apply.
    ///   - maxStartedCalls: started calls that trigger finishing them (≥ 1).
    init(limits: Limits, maxStartedCalls: Int = ClientConnection.maxStartedCalls) {
        precondition(maxStartedCalls > 0)
        decoder = FrameDecoder(maxMessageBytes: limits.maxMessageBytes)
        idleTimeout = .seconds(limits.idleTimeoutSeconds)
        self.maxStartedCalls = maxStartedCalls
    }

    /// Started calls not yet answered.
    var startedCount: Int { started.count - startedHead }

    // MARK: - Events of the socket loop

    /// The next action, once the previous one (`.send`, or the start of the
    /// session) is done. `now`: session time, arms the idle timer.
    mutating func next(now: Duration) -> Action {
        while true {
            switch state {
            case .decoding:
                if let action = decodeNext() { return action }
            case .draining(let then):
                if let action = drainNext(then: then, now: now) { return action }
            case .reading(let deadline):
                if stopping {
                    state = .closing(.shutdown)
                } else if now < deadline {
                    return .read(timeout: deadline - now)
                } else {
                    state = .draining(then: .close(.idleTimeout, finalReply: nil))
                }
            case .closing(let reason):
                state = .closed(reason)
                return .close(reason)
            case .closed:
                preconditionFailure("session machine: event after close")
            case .beginning, .handling, .finishing:
                preconditionFailure("session machine: a call runs; feed its outcome first")
            case .readingAvailable:
                preconditionFailure("session machine: a read without waiting runs; feed its bytes first")
            }
        }
    }

    /// Bytes arrived (non-empty): they re-arm the idle timer and are decoded.
    mutating func bytesRead(_ bytes: some Collection<UInt8>, now: Duration) -> Action {
        expectReading()
        decoder.append(bytes)
        state = .decoding
        return next(now: now)
    }

    /// What a read without waiting (``Action/readAvailable``) found: more of
    /// the buffered message (decoded on; bytes do not re-arm the idle timer,
    /// which does not run while calls wait), or nothing, and the started calls
    /// are finished before the session reads again.
    mutating func bytesArrived(_ bytes: some Collection<UInt8>, now: Duration) -> Action {
        guard case .readingAvailable = state else {
            preconditionFailure("session machine: bytes of a read without waiting, which does not run")
        }
        if bytes.isEmpty {
            // Nothing more: finish the started calls, then read (or close, once the client is gone).
            state = .draining(then: clientGone ? .close(.clientGone, finalReply: nil) : .read)
        } else {
            decoder.append(bytes)
            state = .decoding
        }
        return next(now: now)
    }

    /// The read found the end of the stream: the client hung up (or shutdown
    /// ended the read side). Unfinished bytes get no reply.
    mutating func inputEnded(now: Duration) -> Action {
        expectReading()
        let reason: CloseReason = stopping ? .shutdown : .clientHungUp(midMessage: decoder.hasPartialMessage)
        state = .draining(then: .close(reason, finalReply: nil))
        return next(now: now)
    }

    /// The read failed with an error other than its timeout.
    mutating func readFailed(now: Duration) -> Action {
        expectReading()
        state = .draining(then: .close(.readFailed, finalReply: nil))
        return next(now: now)
    }

    /// Time passed while reading (the read timed out): closes once `now`
    /// reaches the idle deadline, else reads for the time left.
    mutating func tick(now: Duration) -> Action {
        expectReading()
        return next(now: now)
    }

    // MARK: - Events of a call

    /// What ``CallHandler/begin(_:)`` did with call `id` (after ``Action/begin(_:_:)``).
    mutating func callBegun(_ id: CallID, _ outcome: BeginOutcome, now: Duration) -> Action {
        guard case .beginning(id, let call) = state else {
            preconditionFailure("session machine: call \(id) is not beginning")
        }
        switch outcome {
        case .started:
            started.append(StartedCall(id: id, oneway: call.oneway, failure: nil))
            state = startedCount >= maxStartedCalls ? .draining(then: .decode) : .decoding
        case .failed(let error):
            // As before the machine: a refused start does not count towards the cap.
            started.append(StartedCall(id: id, oneway: call.oneway, failure: error))
            state = .decoding
        case .declined:
            state = .draining(then: .handle(id, call))
        }
        return next(now: now)
    }

    /// A reply that running call `id` sends (during ``Action/begin(_:_:)``,
    /// ``Action/handle(_:_:)`` or ``Action/finish(_:)``).
    /// - Returns: whether to write it, and whether it starts the connection's
    ///   first stream; nothing is written for a oneway call or a gone client.
    mutating func reply(_ reply: VarlinkReply, from id: CallID) -> ReplyAction {
        let oneway: Bool
        switch state {
        case .beginning(id, let call): oneway = call.oneway
        case .handling(id, let o), .finishing(id, let o, _): oneway = o
        default: preconditionFailure("session machine: a reply from call \(id), which does not run")
        }
        if oneway { return .discard }
        if clientGone { return .clientGone }
        guard reply.continues else { return .send(startsStream: false) }
        runningCallStreams = true
        let first = !streamStarted
        streamStarted = true
        return .send(startsStream: first)
    }

    /// Running call `id` ended (after ``Action/handle(_:_:)`` or
    /// ``Action/finish(_:)``); `error` is what it threw, mapped with
    /// ``WireError/init(mapping:)``, sent unless the call is oneway or the
    /// client is gone.
    mutating func callCompleted(_ id: CallID, error: WireError?, now: Duration) -> Action {
        let oneway: Bool
        switch state {
        case .handling(id, let o):
            oneway = o
            state = .decoding
        case .finishing(id, let o, let then):
            oneway = o
            state = .draining(then: then)
        default:
            preconditionFailure("session machine: call \(id) completed but does not run")
        }
        runningCallStreams = false
        if let error, !oneway, !clientGone { return .send(VarlinkReply(error: error)) }
        return next(now: now)
    }

    /// A write failed: the client is gone. Nothing more is written; the
    /// session closes at the next decision, after finishing started calls.
    mutating func writeFailed() {
        clientGone = true
    }

    /// Shutdown was requested (at any time, even while a call runs).
    mutating func shutdownRequested() -> ShutdownAction {
        stopping = true
        return runningCallStreams ? .stopStreaming : .drain
    }

    // MARK: - Rules

    /// The action for the next buffered message, or `nil` after a change of
    /// state with no action yet.
    private mutating func decodeNext() -> Action? {
        let message: [UInt8]?
        do {
            message = try decoder.next()
        } catch {
            let refusal = VarlinkReply(
                error: WireError(
                    mapping: EntryError.limitExceeded("max-message-size", maximum: decoder.maxMessageBytes)))
            state = .draining(then: .close(.messageTooLarge, finalReply: refusal))
            return nil
        }
        guard let message else {
            // Take what else has arrived, without waiting: the rest of a message begun here
            // while started calls wait (so it is begun while they are stored), or what a
            // client that left sent before it went (the drain after an empty read closes).
            if clientGone || (startedCount > 0 && decoder.hasPartialMessage && !stopping) {
                state = .readingAvailable
                return .readAvailable
            }
            state = .draining(then: .read)
            return nil
        }
        let call: VarlinkCall
        do {
            call = try VarlinkCall.decode(message)
        } catch {
            state = .draining(then: .close(.undecodableMessage, finalReply: VarlinkReply(error: error)))
            return nil
        }
        let id = nextCallID
        nextCallID += 1
        if clientGone && call.more {
            // A stream nobody reads would wait for changes until shutdown: skip it.
            state = .decoding
            return nil
        }
        state = .beginning(id, call)
        return .begin(id, call)
    }

    /// The next step of a drain: answer the oldest started call, or go on
    /// with `then`. `nil` after a change of state with no action yet.
    private mutating func drainNext(then: AfterDrain, now: Duration) -> Action? {
        if startedHead < started.count {
            let head = started[startedHead]
            startedHead += 1
            if startedHead == started.count {
                started.removeAll(keepingCapacity: true)
                startedHead = 0
            }
            if let failure = head.failure {
                return head.oneway || clientGone ? nil : .send(VarlinkReply(error: failure))
            }
            state = .finishing(head.id, oneway: head.oneway, then: then)
            return .finish(head.id)
        }
        switch then {
        case .decode:
            state = .decoding
        case .handle(let id, let call):
            state = .handling(id, oneway: call.oneway)
            return .handle(id, call)
        case .read:
            if clientGone {
                // Take what the client sent before it left, without waiting (see decodeNext).
                state = .readingAvailable
                return .readAvailable
            } else if stopping {
                state = .closing(.shutdown)
            } else {
                state = .reading(idleDeadline: now + idleTimeout)
                return .read(timeout: idleTimeout)
            }
        case .close(let reason, let finalReply):
            state = .closing(reason)
            if let finalReply, !clientGone { return .send(finalReply) }
        }
        return nil
    }

    /// Traps unless the machine waits for bytes (a read outcome fed at any
    /// other time is a programmer error).
    private func expectReading() {
        guard case .reading = state else { preconditionFailure("session machine: a read outcome while not reading") }
    }
}
