import Foundation

/// CPU-bound neighbour processes for the busy-machine phase: each is
/// `/bin/sh` spinning in a loop at nice 0, the load another engineer's build
/// puts on a shared machine.
///
/// They are killed by ``stop()`` and by `deinit`, and end on their own within
/// a fraction of a second when the bench process is gone (each checks its
/// parent between spins), so none outlives the bench even when it is killed.
final class Neighbours {
    /// The word in every neighbour's command line (`$0` of its shell), by which
    /// tests find leftovers.
    static let marker = "entryd-bench-neighbour"
    /// The spinning loop: 5,000 shell iterations (~25 ms on a quiet core), then a check that the parent lives.
    static let script = "while kill -0 $PPID 2>/dev/null; do i=0; while [ $i -lt 5000 ]; do i=$((i+1)); done; done"

    private var children: [ChildProcess] = []

    /// Starts `count` neighbours at nice 0.
    /// - Throws: ``BenchFailure`` when one cannot start (those started are killed).
    init(count: Int) throws {
        for _ in 0..<count {
            let child = try ChildProcess("/bin/sh", ["-c", Neighbours.script, Neighbours.marker])
            children.append(child)
            // The bench's own nice would otherwise be inherited; lowering it needs privilege, so a failure is reported.
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(child.pid), 0) != 0 {
                progress(
                    "neighbour \(child.pid): cannot set nice 0 (\(String(cString: strerror(errno)))); it runs at the bench's nice"
                )
            }
        }
    }

    /// Kills every neighbour and reaps it.
    func stop() {
        for c in children { c.kill() }
        children = []
    }

    deinit { stop() }
}
