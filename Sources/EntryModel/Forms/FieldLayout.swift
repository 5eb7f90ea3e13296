/// How a form's fields map onto storage: which fields feed the entries
/// table's filter and sort columns (doc/protocol.md `Filter`), and which fields
/// merge together as one register in sync (doc/design.md "Field groups").
package struct FieldLayout: Sendable, Equatable {
    /// The field copied to the entries `name` column (the `name` order and the
    /// folded `text` filter), or `nil` when the form has none.
    package var name: String?
    /// The field copied to the `birthday` column (`YYYY-MM-DD`; the `birthday`
    /// order and the `bornFrom`/`bornTo` filters), or `nil`.
    package var birthday: String?
    /// The field copied to the `country` column (ISO 3166-1 alpha-2; the
    /// `country` filter), or `nil`.
    package var country: String?
    /// The field copied to the `province` column (GB/T 2260 province code; the
    /// `province` filter), or `nil`.
    package var province: String?
    /// The field copied to the `city` column (GB/T 2260 city code; the `city`
    /// filter), or `nil`.
    package var city: String?
    /// The field copied to the `appointment` column (`YYYY-MM-DD HH:mm`; the
    /// `appointment` order and the `appointmentFrom`/`appointmentTo` filters),
    /// or `nil`.
    package var appointment: String?
    /// The phone fields (their E.164 values feed the `t:` search keys, ``SearchKeys``).
    package var phones: [String]
    /// The e-mail fields (their values feed the `m:` search keys, ``SearchKeys``).
    package var emails: [String]
    /// Fields tied by `parent` or `required-when`, each group written and
    /// merged as one register (e.g. country + province + city). Fields in no
    /// group are registers of their own.
    package var groups: [[String]]

    /// A layout from field names (`nil`: the column stays empty) and field groups.
    package init(
        name: String? = nil, birthday: String? = nil, country: String? = nil, province: String? = nil,
        city: String? = nil, appointment: String? = nil, phones: [String] = [], emails: [String] = [],
        groups: [[String]] = []
    ) {
        self.name = name
        self.birthday = birthday
        self.country = country
        self.province = province
        self.city = city
        self.appointment = appointment
        self.phones = phones
        self.emails = emails
        self.groups = groups
    }

    /// The registration form's layout (also the fallback for unknown forms).
    package static let registration = FieldLayout(
        name: "name", birthday: "birthday", country: "country", province: "province", city: "city",
        appointment: "appointment", phones: ["phone"], emails: ["email"],
        groups: [["country", "province", "city"], ["contact_method", "phone", "email"]])

    /// The group `field` belongs to (itself alone when in none).
    package func group(of field: String) -> [String] {
        groups.first(where: { $0.contains(field) }) ?? [field]
    }
}

/// Case-insensitive search key of a name: Unicode lower case.
package func foldedName(_ s: String) -> String { s.lowercased() }
