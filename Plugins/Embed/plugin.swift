import Foundation
import PackagePlugin

/// Generates, at build time, the Swift sources that carry the repository's own
/// files into the binaries (Sources/entryd-embed does the writing):
///
/// - EntryWeb: WebAssets.swift from web/;
/// - EntryModel: EmbeddedTables.swift and EmbeddedForms.swift from data/*.tsv,
///   data/countries.version and config/forms/registration.conf;
/// - EntryProtocol: InterfaceDescriptions.swift and WireNames.swift from
///   interfaces/*.varlink (in doc/protocol.md's order).
///
/// Literals compiled into the code, not SwiftPM resources (`Bundle.module`
/// breaks once the binaries are installed). Each is a build command with its
/// inputs declared, so it runs again only when one of them changes.
@main struct Embed: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let tool = try context.tool(named: "entryd-embed").url
        let root = context.package.directoryURL
        let out = context.pluginWorkDirectoryURL
        func files(_ names: [String]) -> [URL] { names.map { root.appending(path: $0) } }
        switch target.name {
        case "EntryWeb":
            let output = out.appending(path: "WebAssets.swift")
            return [
                .buildCommand(
                    displayName: "Embedding the pages of web into EntryWeb", executable: tool,
                    arguments: ["web", root.path(), output.path()],
                    inputFiles: try filesUnder(root.appending(path: "web")), outputFiles: [output])
            ]
        case "EntryModel":
            let outputs = [out.appending(path: "EmbeddedTables.swift"), out.appending(path: "EmbeddedForms.swift")]
            return [
                .buildCommand(
                    displayName: "Embedding the reference tables and the built-in form into EntryModel",
                    executable: tool,
                    arguments: ["data", root.path()] + outputs.map { $0.path() },
                    inputFiles: files([
                        "data/countries.version", "data/countries.tsv", "data/cn_divisions.tsv",
                        "data/cn_divisions_retired.tsv", "config/forms/registration.conf",
                    ]),
                    outputFiles: outputs)
            ]
        case "EntryProtocol":
            let outputs = [out.appending(path: "InterfaceDescriptions.swift"), out.appending(path: "WireNames.swift")]
            return [
                .buildCommand(
                    displayName: "Embedding the varlink interfaces into EntryProtocol", executable: tool,
                    arguments: ["interfaces", root.path()] + outputs.map { $0.path() },
                    inputFiles: files(["doc/protocol.md"]) + (try filesUnder(root.appending(path: "interfaces"))),
                    outputFiles: outputs)
            ]
        default:
            throw PluginError("the Embed plugin has nothing for target \(target.name)")
        }
    }

    /// `directory`, the directories and the files under it: an edited file, and a
    /// file added or removed (the directory changes), rerun the command.
    private func filesUnder(_ directory: URL) throws -> [URL] {
        guard let walk = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            throw PluginError("cannot list \(directory.path())")
        }
        var found = [directory]
        for case let url as URL in walk { found.append(url) }
        return found.sorted { $0.path() < $1.path() }
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
