import Foundation
import Testing
@testable import EntrySync

/// ``PeerTransport`` over `exec:`: the command's process is let go once the
/// connection is closed (a daemon syncs an `exec:` peer every interval).
@Suite struct PeerTransportTests {
    @Test("exec: close() waits for the command and lets its Process be freed")
    func execProcessFreed() throws {
        weak var child: Process?
        do {
            let transport = try PeerTransport(address: "exec:cat", timeoutSeconds: 5)
            child = transport.process
            #expect(child?.isRunning == true)
            transport.close()
            #expect(child?.isRunning == false)
        }
        // Foundation's manager thread lets go of its own reference just after the
        // child is reaped (it invalidates the socket it watched the child with).
        let deadline = Date().addingTimeInterval(5)
        while child != nil && Date() < deadline { usleep(10_000) }
        #expect(child == nil, "the exec: command's Process is never freed")
    }
}
