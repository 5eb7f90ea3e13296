import EntryModel

/// The exit statuses of `entryctl` and `entryd`, from sysexits(3)
/// (`/usr/include/sysexits.h`).
package enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success.
    case success = 0
    /// The daemon refused: not found, version mismatch, exists, permission … .
    case failure = 1
    /// `EX_USAGE`: bad or missing arguments.
    case usage = 64
    /// `EX_DATAERR`: the values did not validate (`ValidationFailed`).
    case dataError = 65
    /// `EX_NOINPUT` (sysexits.h: "An input file (not a system file) did not
    /// exist or was not readable"): `entryd --restore` of a missing backup file.
    case noInput = 66
    /// `EX_UNAVAILABLE`: no daemon could be reached; for `entryd`, another
    /// entryd already serves the socket or holds the database.
    case unavailable = 69
    /// `EX_CANTCREAT` (sysexits.h: "A (user specified) output file cannot be
    /// created"): `entryd` cannot create or take its listening socket.
    case cantCreate = 73
    /// `EX_IOERR`: the output could not be written (a full disk, a closed
    /// stdout); for `entryd`, the database cannot be opened.
    case ioError = 74
    /// `EX_TEMPFAIL`: try again later (storage failure, a limit, a lost connection).
    case temporaryFailure = 75
    /// `EX_CONFIG` (sysexits.h: "Something was found in an unconfigured or
    /// misconfigured state"): `entryd`'s configuration or a form file is wrong.
    case config = 78
}

extension ExitCode {
    /// The exit status for a varlink error reply, by its name (the one mapping
    /// of wire errors to exit codes; entryctl's words are chosen separately):
    /// `ValidationFailed` → ``dataError``; `InvalidParameter` → ``usage``;
    /// `LimitExceeded`, `StorageFailed`, `PeerUnreachable` → ``temporaryFailure``
    /// (retrying later may succeed); `BackupUnsupported` → ``unavailable``
    /// (this node cannot do it; its database server's own tool can); any other
    /// error, and a name this build does not declare (`nil`), → ``failure``.
    package init(wireError name: WireErrorName?) {
        switch name {
        case .validationFailed?: self = .dataError
        case .backupUnsupported?: self = .unavailable
        case .invalidParameter?: self = .usage
        case .limitExceeded?, .storageFailed?, .peerUnreachable?: self = .temporaryFailure
        case .entryNotFound?, .entryExists?, .versionMismatch?, .entriesFormNotFound?, .entryErased?,
            .formsFormNotFound?, .fieldNotFound?, .clockSkew?, .peerNotFound?, .conflictNotFound?,
            .interfaceNotFound?, .methodNotFound?, .methodNotImplemented?, .permissionDenied?, nil:
            self = .failure
        }
    }

    /// The exit status for the error reply `error`: as for its name, except
    /// that `PeerUnreachable` with `role` (the peer refused this node, a
    /// lasting refusal until the peer's roles change) is ``failure``, not
    /// ``temporaryFailure``: trying again as is would not help.
    package init(wireError error: WireError) {
        if error.known == .peerUnreachable, error.parameters["role"]?.stringValue != nil {
            self = .failure
        } else {
            self.init(wireError: error.known)
        }
    }
}
