@preconcurrency import Glibc
import Foundation
import Testing
@testable import EntrySync

/// ``PeerTransport`` over `exec:`: the command is reaped once the connection
/// is closed (a daemon syncs an `exec:` peer every interval), and a command
/// that never answers and never exits is ended, its children too, within a
/// bound (it used to hold the peer scheduler until it exited).
@Suite struct PeerTransportTests {
    /// Whether any process of process group `group` is left, 2 s after its
    /// signal (a signalled process takes a moment to exit).
    static func groupAlive(_ group: pid_t) -> Bool {
        let deadline = ContinuousClock.now + .seconds(2)
        while kill(-group, 0) == 0 || errno != ESRCH {
            if ContinuousClock.now >= deadline { return true }
            usleep(10_000)
        }
        return false
    }

    @Test("exec: close() waits for a command that ends when its input does, and reaps it")
    func execReaped() throws {
        let transport = try PeerTransport(address: "exec:cat", timeoutSeconds: 5)
        let child = try #require(transport.pid)
        #expect(kill(child, 0) == 0)
        let began = ContinuousClock.now
        transport.close()
        #expect(ContinuousClock.now - began < .seconds(PeerTransport.exitGrace.own))
        #expect(kill(child, 0) != 0 && errno == ESRCH, "reaped, no zombie left")
        #expect(transport.pid == nil)
    }

    @Test(
        "exec: a command that never answers nor exits, with a child of its own: the call times out, close() ends the whole group within the grace and reaps it"
    )
    func execHungGroupEnded() throws {
        let transport = try PeerTransport(address: "exec:sleep 300 & sleep 300; wait", timeoutSeconds: 1)
        let child = try #require(transport.pid)
        #expect(throws: (any Error).self) { _ = try transport.connection.call("org.varlink.service.GetInfo") }
        let began = ContinuousClock.now
        transport.close()
        let took = ContinuousClock.now - began
        #expect(took < .seconds(PeerTransport.exitGrace.own + PeerTransport.exitGrace.afterTerm + 2), "\(took)")
        #expect(!Self.groupAlive(child), "no process of the command's group is left")
        #expect(kill(child, 0) != 0 && errno == ESRCH, "reaped")
    }

    @Test("exec: a command that leaves a child behind when it exits: the child is ended with it")
    func execLeftoverEnded() throws {
        let transport = try PeerTransport(address: "exec:sleep 300 & exit 0", timeoutSeconds: 1)
        let child = try #require(transport.pid)
        transport.close()
        #expect(!Self.groupAlive(child))
    }

    @Test("exec: a command the daemon's blocked signals would protect still ends: the mask is not inherited")
    func execSignalsNotBlocked() throws {
        var block = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGTERM)
        var old = sigset_t()
        pthread_sigmask(SIG_BLOCK, &block, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        let transport = try PeerTransport(address: "exec:sleep 300", timeoutSeconds: 1)
        let child = try #require(transport.pid)
        let began = ContinuousClock.now
        transport.close()
        // SIGTERM ends it in the second stage; a blocked SIGTERM would have needed SIGKILL after it.
        #expect(
            ContinuousClock.now - began < .seconds(PeerTransport.exitGrace.own + PeerTransport.exitGrace.afterTerm))
        #expect(!Self.groupAlive(child))
    }
}
