extension WireError {
    /// Maps any error to the wire, in one place: ``WireError`` as is; storage
    /// failures of SQLite to `StorageFailed` with a reason safe to show;
    /// anything else to `StorageFailed` with no detail (the daemon logs it).
    public init(mapping error: any Error) {
        switch error {
        case let e as WireError: self = e
        case let e as SQLiteError:
            switch e.primaryCode {
            case 13: self = .storageFailed("the disk is full: free space, then retry")
            case 8: self = .storageFailed("the database is read-only")
            case 5, 6: self = .storageFailed("the database is busy: retry")
            case 10: self = .storageFailed("an I/O error occurred writing the database")
            case 11, 26: self = .storageFailed("the database file is damaged")
            default: self = .storageFailed("the store refused the write (SQLite code \(e.code))")
            }
        default: self = .storageFailed("internal error; see the daemon log")
        }
    }
}
