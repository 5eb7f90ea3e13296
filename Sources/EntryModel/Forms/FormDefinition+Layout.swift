extension FormDefinition {
    /// How this form maps onto storage (``FieldLayout``): the filter columns
    /// take the field named `name` (else the first text field), `birthday`
    /// (else the first date field), `appointment` (else the first date-time
    /// field), and the first country, province and city fields; every phone
    /// and e-mail field feeds the search keys (``SearchKeys``); the merge groups join fields tied by `parent` or `required-when`
    /// (doc/design.md "Field groups"), e.g. country + province + city and
    /// contact_method + phone + email.
    /// Built once per form, into ``layout``.
    static func makeLayout(fields: [FieldDefinition]) -> FieldLayout {
        func first(_ type: FieldType) -> String? { fields.first(where: { $0.type == type })?.name }
        func named(_ name: String, else type: FieldType) -> String? {
            fields.contains { $0.name == name } ? name : first(type)
        }
        // Union-find over the ties between fields.
        var parent = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.name) })
        func root(_ x: String) -> String {
            var x = x
            while let p = parent[x], p != x { x = p }
            return x
        }
        func join(_ a: String, _ b: String) {
            guard parent[a] != nil, parent[b] != nil else { return }
            parent[root(a)] = root(b)
        }
        for f in fields {
            if let p = f.parent { join(f.name, p) }
            if let w = f.requiredWhen { join(f.name, w.field) }
        }
        var groups: [String: [String]] = [:]
        for f in fields { groups[root(f.name), default: []].append(f.name) }
        let tied = fields.map(\.name).compactMap { name -> [String]? in
            guard root(name) == name, let g = groups[name], g.count > 1 else { return nil }
            return g
        }
        return FieldLayout(
            name: named("name", else: .text), birthday: named("birthday", else: .date),
            country: first(.country), province: first(.province), city: first(.city),
            appointment: named("appointment", else: .datetime),
            phones: fields.filter { $0.type == .phone }.map(\.name),
            emails: fields.filter { $0.type == .email }.map(\.name), groups: tied)
    }
}
