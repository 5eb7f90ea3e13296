import EntryModel

/// Typed access to a call's `parameters` object.
///
/// Every accessor throws ``EntryError/invalidParameter(_:)`` (on the wire `InvalidParameter`)
/// naming the parameter when it is missing (for required ones) or has the
/// wrong JSON type (doc/protocol.md: "the connection stays open"). `null` counts as
/// absent for optional parameters (varlink `?type`).
package struct Parameters: Sendable {
    /// The parameters object as received.
    package let json: JSON

    /// Wraps a parameters value (normally an `.object`; any other kind reads as empty).
    package init(_ json: JSON) { self.json = json }

    /// The member `name`, with `null` counting as absent (varlink `?type`).
    func value(_ name: String) -> JSON? {
        guard let v = json[name], !v.isNull else { return nil }
        return v
    }

    /// A required string.
    package func string(_ name: String) throws(EntryError) -> String {
        guard let s = try optionalString(name) else { throw .invalidParameter(name) }
        return s
    }

    /// An optional string.
    package func optionalString(_ name: String) throws(EntryError) -> String? {
        guard let v = value(name) else { return nil }
        guard let s = v.stringValue else { throw .invalidParameter(name) }
        return s
    }

    /// An optional integer (JSON numbers without a fraction).
    package func optionalInt(_ name: String) throws(EntryError) -> Int64? {
        guard let v = value(name) else { return nil }
        guard let i = v.intValue else { throw .invalidParameter(name) }
        return i
    }

    /// A required integer.
    package func int(_ name: String) throws(EntryError) -> Int64 {
        guard let i = try optionalInt(name) else { throw .invalidParameter(name) }
        return i
    }

    /// An optional boolean.
    package func optionalBool(_ name: String) throws(EntryError) -> Bool? {
        guard let v = value(name) else { return nil }
        guard let b = v.boolValue else { throw .invalidParameter(name) }
        return b
    }

    /// A required `[string]string` map (varlink dictionary).
    package func stringMap(_ name: String) throws(EntryError) -> [String: String] {
        guard let m = try optionalStringMap(name) else { throw .invalidParameter(name) }
        return m
    }

    /// An optional `[string]string` map.
    package func optionalStringMap(_ name: String) throws(EntryError) -> [String: String]? {
        guard let v = value(name) else { return nil }
        return try Parameters.stringMap(v, name: name)
    }

    /// Reads a JSON object of strings.
    /// - Throws: `InvalidParameter(name)` when `v` is not an object of strings.
    package static func stringMap(_ v: JSON, name: String) throws(EntryError) -> [String: String] {
        guard let members = v.objectValue else { throw .invalidParameter(name) }
        var map: [String: String] = [:]
        map.reserveCapacity(members.count)
        for (k, value) in members {
            guard let s = value.stringValue else { throw .invalidParameter(name) }
            map[k] = s
        }
        return map
    }

    /// A required array.
    package func array(_ name: String) throws(EntryError) -> [JSON] {
        guard let v = value(name), let a = v.arrayValue else { throw .invalidParameter(name) }
        return a
    }

    /// An optional object (as `Parameters`).
    package func optionalObject(_ name: String) throws(EntryError) -> Parameters? {
        guard let v = value(name) else { return nil }
        guard case .object = v else { throw .invalidParameter(name) }
        return Parameters(v)
    }
}
