extension Method {
    /// The errors a call of this method can answer besides those any call can
    /// (``WireErrorName/anyCall``), as its handler in EntryService throws them:
    /// one exhaustive switch, so a new method does not compile until its errors
    /// are listed. The OpenAPI document lists each operation's errors from it;
    /// MethodErrorsTests drives every handler with bad calls and checks that each
    /// error answered is listed.
    package var errors: [WireErrorName] {
        switch self {
        case .entriesAdd: [.validationFailed, .entryExists, .entryErased, .entriesFormNotFound]
        case .entriesGet, .entriesHistory: [.entryNotFound, .entryErased]
        // Restore: ValidationFailed for a reason with a control character (doc/protocol.md "Free text").
        case .entriesRestore: [.validationFailed, .entryNotFound, .entryErased]
        case .entriesUpdate, .entriesDelete: [.validationFailed, .entryNotFound, .entryErased, .versionMismatch]
        case .entriesList: [.validationFailed, .entriesFormNotFound]
        case .entriesImport: [.entriesFormNotFound]
        case .entriesBackup: [.backupUnsupported]
        case .entriesErase, .entriesVerifyErasure: [.entryNotFound, .entryErased]
        case .entriesFindSubject: [.validationFailed, .entriesFormNotFound]
        case .entriesErasures: []
        case .formsListForms, .formsCheckStored: []
        case .formsGetForm, .formsCheck: [.formsFormNotFound]
        case .formsOptions: [.formsFormNotFound, .fieldNotFound]
        case .syncStatus, .syncChanges, .syncHeldFrom, .syncCompact, .syncListConflicts, .syncMetrics: []
        case .syncApply: [.clockSkew]
        case .syncSyncPeer: [.peerNotFound, .peerUnreachable]
        case .syncResolve: [.conflictNotFound, .entryErased]
        case .serviceGetInfo: []
        case .serviceGetInterfaceDescription: [.interfaceNotFound]
        }
    }
}

extension WireErrorName {
    /// The errors any call can answer: a parameter of the wrong type or out of
    /// range, a role that does not allow the method, a limit (message size,
    /// batch, connections), a failure to store.
    package static let anyCall: [WireErrorName] = [
        .invalidParameter, .permissionDenied, .limitExceeded, .storageFailed,
    ]
}
