/// Observations counted into fixed buckets, as Prometheus's histograms are:
/// ``counts``[i] is how many were at most ``bounds``[i] and above the bound
/// before (not cumulative); the last element counts those above every bound.
package struct Histogram: Equatable, Sendable {
    /// Upper bounds of the buckets, ascending (seconds, or whatever is observed).
    package let bounds: [Double]
    /// One count per bound, then one for the values above the last bound.
    package private(set) var counts: [Int]
    /// The sum of every value observed.
    package private(set) var sum: Double = 0
    /// How many values were observed.
    package var count: Int { counts.reduce(0, +) }

    /// An empty histogram over `bounds` (ascending).
    package init(bounds: [Double]) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Counts `value` in the first bucket whose bound is at least `value`.
    package mutating func observe(_ value: Double) {
        var index = bounds.count
        for (i, bound) in bounds.enumerated() where value <= bound {
            index = i
            break
        }
        counts[index] += 1
        sum += value
    }

    /// The counts as Prometheus's cumulative buckets: `cumulative[i]` is how
    /// many were at most `bounds[i]` (the `+Inf` bucket is ``count``).
    package var cumulative: [Int] {
        var running = 0
        return counts.dropLast().map {
            running += $0
            return running
        }
    }
}

/// What the write queue did since the store opened (``EntryStore/writeStatistics``):
/// the monitoring call's write rounds, writes per round and commit latency.
package struct WriteStatistics: Equatable, Sendable {
    /// Write transactions committed.
    package var rounds = 0
    /// Writes (jobs) those transactions carried, failed jobs of a committed round included.
    package var jobs = 0
    /// Jobs per committed round.
    package var roundJobs = Histogram(bounds: [1, 2, 4, 8, 16, 32, 64, 128, 256])
    /// How long each round's `COMMIT` (with the shared log's publication on a
    /// hub) took, in seconds: the durable write's wait for the disk or the server.
    package var commitSeconds = Histogram(
        bounds: [0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])
}
