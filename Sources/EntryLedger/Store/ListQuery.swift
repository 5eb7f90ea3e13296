import EntryModel

/// Sort order for ``EntryStore/list(_:)`` (doc/protocol.md `Order`).
package enum ListOrder: String, Sendable, CaseIterable {
    case created, updated, birthday, name, appointment

    /// The entries column this order sorts on (ties are broken by id).
    var column: String {
        switch self {
        case .created: return "created_at"
        case .updated: return "updated_at"
        case .birthday: return "birthday"
        case .name: return "name"
        case .appointment: return "appointment"
        }
    }

    /// doc/protocol.md: descending by default for created and updated
    /// (ascending for birthday, name and appointment: the day's first first).
    package var defaultDescending: Bool { self == .created || self == .updated }
}

/// How ``ListOrder/name`` compares names.
package enum NameCollation: String, Sendable, CaseIterable {
    /// By Unicode code point (SQLite's `BINARY`): the order for `en`.
    case codePoint
    /// ICU's `zh` collation, Han characters by pinyin (the SQLite collation
    /// `pinyin`, ``PinyinCollation``): the order for `zh`.
    case pinyin
}

/// A List query with canonical filter values (the service resolves lenient input first).
package struct ListQuery: Sendable {
    /// Only entries of this form (a form name), or all forms when `nil`.
    package var form: String?
    /// ISO 3166-1 alpha-2 code the `country` column must equal.
    package var country: String?
    /// GB/T 2260 province code the `province` column must equal.
    package var province: String?
    /// GB/T 2260 city code the `city` column must equal.
    package var city: String?
    /// Inclusive `YYYY-MM-DD` bounds on the birthday column.
    package var bornFrom: String?
    /// Inclusive upper `YYYY-MM-DD` bound; entries without a birthday never match.
    package var bornTo: String?
    /// Case-insensitive substring of the name (already folded with `lowercased()`).
    package var text: String?
    /// Search key prefixes (``SearchKeys/prefixes(forQuery:)``): entries with
    /// a key that starts with any of them; `nil` or empty for no search.
    package var search: [String]?
    /// Inclusive `YYYY-MM-DD HH:mm` lower bound on the appointment column.
    package var appointmentFrom: String?
    /// Inclusive `YYYY-MM-DD HH:mm` upper bound; entries without an appointment never match.
    package var appointmentTo: String?
    /// RFC 3339 UTC ms: entries updated at or after it.
    package var updatedSince: String?
    /// The sort column (ties broken by id).
    package var order: ListOrder = .created
    /// How names compare when `order` is ``ListOrder/name`` (the service
    /// chooses it by locale); ignored for other orders.
    package var nameCollation: NameCollation = .codePoint
    /// Sort direction; the service defaults it with ``ListOrder/defaultDescending``.
    package var descending: Bool = true
    /// Entries per page (1…1000).
    package var limit: Int = 50
    /// Keyset position: the sort value and id of the last entry of the previous page.
    package var after: (value: String, id: String)?
    /// Include deleted entries (tombstones); by default they are left out.
    package var includeDeleted = false

    /// A query of every non-deleted entry, newest created first, 50 per page.
    package init() {}
}

/// One page of ``EntryStore/list(_:)``.
package struct ListPage: Sendable {
    /// At most `limit` entries, in the query's order.
    package var entries: [StoredEntry]
    /// Keyset position of the last entry when more may follow, else `nil`.
    package var next: (value: String, id: String)?
    /// Number of entries matching the filters (all pages).
    package var total: Int

    /// A page with every member given.
    package init(entries: [StoredEntry], next: (value: String, id: String)?, total: Int) {
        self.entries = entries
        self.next = next
        self.total = total
    }
}
