import Foundation
import Testing
@testable import EntryLedger
@testable import EntryServer

/// ``WatchdogMachine``: when entryd pings systemd's watchdog, with the time
/// and the writer's progress injected (no sleeps), then over a real store
/// whose writer is held.
@Suite struct WatchdogMachineTests {
    /// The instant the simulated daemon starts.
    let t0 = ContinuousClock.now

    /// `seconds` after ``t0``.
    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    /// A writer reading: `steps` finished, work waiting since `seconds` after ``t0`` (`nil`: nothing waits).
    func progress(_ steps: UInt64, waitingSince seconds: Double?) -> WriterProgress {
        WriterProgress(steps: steps, waitingSince: seconds.map(at))
    }

    @Test("an idle writer: a ping and a probe at every tick")
    func idle() {
        var machine = WatchdogMachine(interval: .seconds(2))
        #expect(machine.tickInterval == .seconds(1))
        for tick in 0..<5 {
            // Each tick's probe ran before the next (one step each).
            #expect(
                machine.tick(now: at(Double(tick)), progress: progress(UInt64(tick), waitingSince: nil)) == [
                    .ping, .probe,
                ])
        }
        #expect(!machine.isWithholding)
    }

    @Test("a writer that never drains its queue but keeps finishing steps: a ping at every tick, no probe")
    func sustainedLoad() {
        var machine = WatchdogMachine(interval: .seconds(2))
        var steps: UInt64 = 0
        for tick in 0..<60 {
            let now = Double(tick)
            steps += 40
            // Work always waits; the last step finished up to 0.9 s ago.
            #expect(machine.tick(now: at(now), progress: progress(steps, waitingSince: now - 0.9)) == [.ping])
        }
        // A round of one large write that takes 1.9 s: still pinging (under the interval).
        #expect(machine.tick(now: at(61.9), progress: progress(steps, waitingSince: 60)) == [.ping])
        #expect(!machine.isWithholding)
    }

    @Test("work waiting a whole interval without a step: the pings stop, said once, until a step finishes")
    func stuckWhileBusy() {
        var machine = WatchdogMachine(interval: .seconds(2))
        #expect(machine.tick(now: at(0), progress: progress(10, waitingSince: 0)) == [.ping])
        #expect(machine.tick(now: at(1), progress: progress(10, waitingSince: 0)) == [.ping])
        #expect(
            machine.tick(now: at(2), progress: progress(10, waitingSince: 0)) == [
                .withhold(waited: .seconds(2), steps: 10)
            ])
        #expect(machine.isWithholding)
        for tick in 3..<10 {
            #expect(machine.tick(now: at(Double(tick)), progress: progress(10, waitingSince: 0)) == [])
        }
        // The writer moves on (a lock released): pings resume, said once.
        #expect(
            machine.tick(now: at(10), progress: progress(11, waitingSince: 9.5)) == [
                .resume(stuck: .seconds(10)), .ping,
            ])
        #expect(machine.tick(now: at(11), progress: progress(12, waitingSince: nil)) == [.ping, .probe])
        #expect(!machine.isWithholding)
    }

    @Test(
        "a writer wedged while idle: the probe of the idle tick stays waiting and stops the pings within interval + tick"
    )
    func wedgedWhileIdle() {
        var machine = WatchdogMachine(interval: .seconds(2))
        #expect(machine.tick(now: at(0), progress: progress(5, waitingSince: nil)) == [.ping, .probe])
        // The probe queued at 0 s ran (step 6).
        #expect(machine.tick(now: at(1), progress: progress(6, waitingSince: nil)) == [.ping, .probe])
        // Now wedged: the probe queued at 1 s never runs.
        #expect(machine.tick(now: at(2), progress: progress(6, waitingSince: 1)) == [.ping])
        #expect(
            machine.tick(now: at(3), progress: progress(6, waitingSince: 1)) == [
                .withhold(waited: .seconds(2), steps: 6)
            ])
        #expect(machine.tick(now: at(4), progress: progress(6, waitingSince: 1)) == [])
        // The last ping was at 2 s: systemd (WatchdogSec=2) restarts entryd at 4 s.
    }

    @Test("simulated: whenever the writer gets stuck, the last ping is less than an interval after its last step")
    func lastPingBound() {
        let interval = 3.0
        for stuckAt in stride(from: 0.2, through: 9.0, by: 0.7) {
            var machine = WatchdogMachine(interval: .seconds(3))
            var lastPing = -1.0
            var now = 0.0
            while now < 20 {
                // Busy until it wedges at `stuckAt`: a step every 0.1 s, then none.
                let waitingSince = now < stuckAt ? (now * 10).rounded(.down) / 10 : (stuckAt * 10).rounded(.down) / 10
                if machine.tick(now: at(now), progress: progress(UInt64(waitingSince * 10), waitingSince: waitingSince))
                    .contains(.ping)
                {
                    lastPing = now
                }
                now += interval / 2
            }
            #expect(lastPing < stuckAt + interval, "stuck at \(stuckAt) s, last ping at \(lastPing) s")
            // …and a stall shorter than a tick never stops them early.
            #expect(lastPing >= stuckAt + interval / 2 - 0.1, "stuck at \(stuckAt) s, last ping at \(lastPing) s")
            #expect(machine.isWithholding)
        }
    }

    @Test("over a real store: pings while idle, withholds once a write held in the writer has waited an interval")
    func realStoreHeldWriter() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        var machine = WatchdogMachine(interval: .seconds(30))
        #expect(machine.tick(now: .now, progress: store.writerProgress) == [.ping, .probe])
        try store.queueWriterProbe()
        // Hold the writer in a job, as a wedged SQLite call would.
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let held = try store.writer.enqueue { _ in
            running.signal()
            release.wait()
        }
        running.wait()
        let reading = store.writerProgress
        let since = try #require(reading.waitingSince)
        #expect(machine.tick(now: since + .seconds(29), progress: store.writerProgress) == [.ping])
        let actions = machine.tick(now: since + .seconds(30), progress: store.writerProgress)
        #expect(actions == [.withhold(waited: .seconds(30), steps: reading.steps)])
        release.signal()
        try held.wait()
        let deadline = ContinuousClock.now + .seconds(5)
        while store.writerProgress.waitingSince != nil && ContinuousClock.now < deadline { usleep(1000) }
        #expect(
            machine.tick(now: since + .seconds(31), progress: store.writerProgress) == [
                .resume(stuck: .seconds(31)), .ping, .probe,
            ])
    }
}
