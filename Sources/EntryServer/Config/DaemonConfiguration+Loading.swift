import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension DaemonConfiguration {
    /// Reads the configuration file and its drop-ins over the embedded defaults.
    ///
    /// The main file is `path`, or ``defaultPath`` when `path` is `nil`. Then
    /// every `*.conf` file in the directory `FILE.d` beside it
    /// (`/etc/entryd/entryd.conf.d/`) is applied in lexical (byte) order of
    /// the file names, each over the result of the ones before: a key given
    /// again replaces the earlier value, a `[peer NAME]` section changes only
    /// the keys it names.
    ///
    /// - Parameters:
    ///   - path: `--config FILE`, or `nil` for the default file.
    ///   - defaultPath: The default file, ``DaemonConfiguration/defaultPath``
    ///     (tests give another). Its drop-ins are read even when it is missing.
    /// - Throws: ``ConfigurationError`` naming file, line and key: a missing
    ///   `--config` file (a missing default file is fine), an unreadable or
    ///   malformed file, an unknown section or key, a value out of bounds.
    package static func load(path: String?, defaultPath: String = DaemonConfiguration.defaultPath)
        throws(ConfigurationError) -> DaemonConfiguration
    {
        let main = path ?? defaultPath
        var config = DaemonConfiguration()
        if FileManager.default.fileExists(atPath: main) || path != nil {
            try config.apply(file: main)
        }
        let dropIns = main + ".d"
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: dropIns, isDirectory: &isDirectory), isDirectory.boolValue {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: dropIns)
            } catch {
                throw ConfigurationError(
                    path: dropIns, line: 0, key: "", message: "cannot read the drop-in directory; check its permissions"
                )
            }
            let sorted = names.filter { $0.hasSuffix(".conf") && !$0.hasPrefix(".") }
                .sorted { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }
            for name in sorted { try config.apply(file: dropIns + "/" + name) }
        }
        return config
    }

    /// Parses one file's text over the embedded defaults (tests, `--check-config`).
    /// - Throws: ``ConfigurationError`` as ``load(path:)``.
    package static func parse(text: String, path: String) throws(ConfigurationError) -> DaemonConfiguration {
        var config = DaemonConfiguration()
        try config.apply(text: text, path: path)
        return config
    }

    /// Applies the file at `path` over this configuration.
    /// - Throws: ``ConfigurationError``.
    package mutating func apply(file path: String) throws(ConfigurationError) {
        // Read through a file handle, not FileManager.contents(atPath:), so that
        // `--config /dev/null` (embedded defaults only) works too.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            throw ConfigurationError(
                path: path, line: 0, key: "", message: "cannot read the file; check the path and its permissions")
        }
        try? handle.close()
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ConfigurationError(path: path, line: 0, key: "", message: "the file is not valid UTF-8")
        }
        try apply(text: text, path: path)
    }

    /// Applies `text` (named `path` in errors) over this configuration.
    /// - Throws: ``ConfigurationError``.
    package mutating func apply(text: String, path: String) throws(ConfigurationError) {
        let ini: IniFile
        do {
            ini = try IniFile(text: text, path: path, continuationLines: false)
        } catch let e as IniError {
            throw ConfigurationError.collected(
                ([e] + e.more).map { ConfigurationError(path: $0.path, line: $0.line, key: "", message: $0.message) })!
        } catch {
            throw ConfigurationError(path: path, line: 0, key: "", message: "cannot parse the file")
        }
        try apply(ini)
    }

    /// Applies the sections of one parsed file, in file order.
    /// - Throws: ``ConfigurationError`` for an unknown section or key, or a bad
    ///   value: the first, with every other problem of the file in `more`.
    package mutating func apply(_ ini: IniFile) throws(ConfigurationError) {
        var errors: [ConfigurationError] = []
        let parent = (ini.path as NSString).deletingLastPathComponent
        let directory =
            parent.hasPrefix("/")
            ? parent
            : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(parent)
        var peerSections: [(name: String, line: Int)] = []
        var peersWithErrors: Set<String> = []
        for section in ini.sections {
            let kind: ConfigKey.Section
            var peerName = ""
            if section.name.isEmpty {
                kind = .main
            } else if section.name == "roles" {
                kind = .roles
            } else if section.name.hasPrefix("peer ") {
                kind = .peer
                peerName = section.name.dropFirst(5).trimmingCharacters(in: .whitespaces)
                guard ConfigValues.isPeerName(peerName) else {
                    errors.append(
                        ConfigurationError(
                            path: ini.path, line: section.line, key: "[\(section.name)]",
                            message: "a peer name is 1-64 letters, digits, '.', '_' or '-'; write [peer NAME]"))
                    continue
                }
                if !peers.contains(where: { $0.name == peerName }) {
                    peers.append(PeerConfig(name: peerName, address: "", intervalSeconds: 60))
                }
                peerSections.append((peerName, section.line))
            } else {
                errors.append(
                    ConfigurationError(
                        path: ini.path, line: section.line, key: "[\(section.name)]",
                        message: "unknown section; entryd.conf has top-level keys, [roles] and [peer NAME]"))
                continue
            }
            for item in section.items {
                guard let key = ConfigKey.all.first(where: { $0.section == kind && $0.name == item.key }) else {
                    let names = ConfigKey.all.filter { $0.section == kind }.map(\.name)
                    let place = kind == .main ? "at the top level" : "in [\(section.name)]"
                    let hint = MatchKey.nearest(item.key, among: names).map { "did you mean '\($0)'? " } ?? ""
                    errors.append(
                        ConfigurationError(
                            path: ini.path, line: item.line, key: item.key,
                            message: "unknown key \(place); \(hint)known keys: \(names.joined(separator: ", "))"))
                    continue
                }
                do {
                    try key.apply(&self, ConfigKey.Context(value: item.value, directory: directory, peer: peerName))
                } catch {
                    errors.append(
                        ConfigurationError(path: ini.path, line: item.line, key: item.key, message: error.message))
                    if kind == .peer { peersWithErrors.insert(peerName) }
                }
            }
        }
        // A peer must have an address once the file that names it is applied.
        // (A peer whose address was refused above is not told again that it has none.)
        for (name, line) in peerSections
        where !peersWithErrors.contains(name)
            && peers.first(where: { $0.name == name })?.address.isEmpty != false
        {
            errors.append(
                ConfigurationError(
                    path: ini.path, line: line, key: "[peer \(name)]",
                    message: "the peer has no address; add 'address = unix:/PATH' or 'address = exec:COMMAND'"))
        }
        if let error = ConfigurationError.collected(errors) { throw error }
        sources.append(ini.path)
    }
}
