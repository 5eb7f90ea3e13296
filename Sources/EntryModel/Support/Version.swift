/// The version of the entryd project (daemon, client and protocol implementation),
/// as `entryctl --version` shows it. Semantic versioning; bump on release.
public enum EntrydVersion {
    /// E.g. `0.1.0`.
    public static let string = "0.1.0"
}
