/// SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number
/// Generators", 2014): a small deterministic generator, so that randomised
/// tests, fuzzers and benchmarks are reproducible from their seed.
/// Not for anything secret: use `SystemRandomNumberGenerator` there.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The 64-bit state; advances by the golden-ratio constant 0x9E3779B97F4A7C15 per draw.
    package var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 pseudorandom bits (the SplitMix64 output mix of the advanced state).
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
