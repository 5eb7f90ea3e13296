import EntryModel

/// A varlink call as received: `{"method": …, "parameters": {…}, "more": …, "oneway": …}`.
///
/// A missing `parameters` key means `{}` (doc/protocol.md). `upgrade` is not used by entryd.
package struct VarlinkCall: Sendable, Equatable {
    /// Fully qualified method, e.g. `io.entryd.Entries.Add`.
    package var method: String
    /// The parameters object (always an `.object`).
    package var parameters: JSON
    /// The caller accepts several replies (all but the last with `continues`).
    package var more: Bool
    /// The caller wants no reply.
    package var oneway: Bool

    /// A call of the fully qualified `method`; `parameters` must be an `.object`.
    package init(method: String, parameters: JSON = .object([]), more: Bool = false, oneway: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
    }

    /// A call of `method`, one declared in interfaces/*.varlink (its qualified
    /// name is the raw value); `parameters` must be an `.object`.
    package init(_ method: Method, parameters: JSON = .object([]), more: Bool = false, oneway: Bool = false) {
        self.init(method: method.rawValue, parameters: parameters, more: more, oneway: oneway)
    }

    /// The interface part of ``method`` (`io.entryd.Entries`).
    package var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The member part of ``method`` (`Add`).
    package var member: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// Decodes a call from one message's bytes.
    /// - Throws: ``WireError`` `org.varlink.service.InvalidParameter` with parameter
    ///   `method` when the bytes are not a JSON object with a string `method`, and
    ///   with `parameters`, `more` or `oneway` when those have the wrong type.
    package static func decode(_ bytes: [UInt8]) throws(WireError) -> VarlinkCall {
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { throw WireError.invalidParameter("method") }
        guard case .object = json, let method = json["method"]?.stringValue, !method.isEmpty else {
            throw WireError.invalidParameter("method")
        }
        var call = VarlinkCall(method: method)
        if let p = json["parameters"], !p.isNull {
            guard case .object = p else { throw WireError.invalidParameter("parameters") }
            call.parameters = p
        }
        if let m = json["more"], !m.isNull {
            guard let b = m.boolValue else { throw WireError.invalidParameter("more") }
            call.more = b
        }
        if let o = json["oneway"], !o.isNull {
            guard let b = o.boolValue else { throw WireError.invalidParameter("oneway") }
            call.oneway = b
        }
        return call
    }

    /// The wire bytes of this call, NUL included.
    package var encoded: [UInt8] {
        var members: [(String, JSON)] = [("method", .string(method)), ("parameters", parameters)]
        if more { members.append(("more", .bool(true))) }
        if oneway { members.append(("oneway", .bool(true))) }
        var out = JSON.object(members).encoded
        out.append(0)
        return out
    }
}

/// A varlink reply: `{"parameters": {…}}`, `{"parameters": …, "continues": true}`
/// or `{"error": "io.entryd.Entries.EntryNotFound", "parameters": {…}}`.
package struct VarlinkReply: Sendable, Equatable {
    /// The reply's parameters object (an error's parameters for an error reply).
    package var parameters: JSON
    /// More replies follow (only in answer to a `more` call).
    package var continues: Bool
    /// Fully qualified error name, or `nil` for a successful reply.
    package var error: String?

    /// A reply; `error` is a fully qualified error name, `nil` for success.
    package init(parameters: JSON, continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    /// A reply carrying `error`.
    package init(error: WireError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    /// The wire bytes of this reply, NUL included.
    package var encoded: [UInt8] {
        var members: [(String, JSON)] = []
        if let error { members.append(("error", .string(error))) }
        members.append(("parameters", parameters))
        if continues { members.append(("continues", .bool(true))) }
        var out = JSON.object(members).encoded
        out.append(0)
        return out
    }

    /// Decodes a reply from one message's bytes.
    /// - Throws: ``JSONParseError`` for bad JSON; ``WireError`` `InvalidParameter`
    ///   when it is not a reply object.
    package static func decode(_ bytes: [UInt8]) throws -> VarlinkReply {
        let json = try JSON.parse(bytes)
        guard case .object = json else { throw WireError.invalidParameter("parameters") }
        let params = json["parameters"] ?? .object([])
        return VarlinkReply(
            parameters: params.isNull ? .object([]) : params,
            continues: json["continues"]?.boolValue ?? false,
            error: json["error"]?.stringValue)
    }
}
