/// A failure entryctl detects itself that is not a usage error (exit 1).
struct Refusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
