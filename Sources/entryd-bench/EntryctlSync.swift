import Foundation

/// The incremental sync as a user runs it: the whole `entryctl sync` process
/// (start, connect, `SyncPeer` both ways, print, exit), timed from spawn to reap.
enum EntryctlSync {
    /// `entryctl` next to the `entryd` executable at `entryd`, or `nil` when there is none.
    static func locate(besides entryd: String) -> String? {
        let path = URL(fileURLWithPath: entryd).resolvingSymlinksInPath().deletingLastPathComponent().path + "/entryctl"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// `times` over: one Add on `source`, then `entryctl --socket TARGET sync
    /// unix:SOURCE`, which must exit 0.
    /// - Returns: the median wall time of the `entryctl` processes, in seconds.
    /// - Throws: ``BenchFailure`` when an Add or an `entryctl sync` fails
    ///   (its output is in `log`).
    static func median(entryctl: String, source: DaemonWorkload, target: String, log: String, times: Int) throws
        -> Double
    {
        var seconds: [Double] = []
        let client = try RawClient(path: source.socket)
        for _ in 0..<times {
            try client.send(Fixture.addCall(source.counter.next()))
            guard !RawClient.isError(try client.receive()) else {
                throw BenchFailure("Add failed before an entryctl sync")
            }
            let t0 = now()
            let status = try ChildProcess(entryctl, ["--socket", target, "sync", "unix:" + source.socket], output: log)
                .wait()
            seconds.append(now() - t0)
            guard status == 0 else { throw BenchFailure("entryctl sync exited \(status); see \(log)") }
        }
        return seconds.sorted()[seconds.count / 2]
    }
}
