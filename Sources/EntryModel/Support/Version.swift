import CIDN2
import CPhoneNumber

/// The version of the entryd project (daemon, client and protocol implementation),
/// as `entryctl --version` shows it. Semantic versioning; bump on release.
package enum EntrydVersion {
    /// E.g. `0.1.0`.
    package static let string = "0.1.0"
}

/// The versions of the C libraries whose rules shape stored values, as
/// `entryd --version` and `io.entryd.Sync.Status` (`libraries`) report them:
/// two nodes whose versions differ may canonicalise or refuse a phone number
/// or an e-mail domain differently.
package enum LibraryVersions {
    /// `phonenumber` (libphonenumber, ``PhoneNumber/libraryVersion``) and
    /// `idn2` (libidn2, from `idn2_check_version(NULL)`: the loaded library's), by name.
    package static let all: [(name: String, version: String)] = [
        ("phonenumber", PhoneNumber.libraryVersion),
        ("idn2", idn2_check_version(nil).map { String(cString: $0) } ?? "unknown"),
    ]

    /// ``all`` by name, as `Status.libraries` sends it.
    package static let byName: [String: String] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.version) })
}
