import Foundation

// entryd-embed: writes the Swift sources that carry this repository's files
// into the binaries, run by the Embed build tool plugin (Plugins/Embed) at
// build time; the outputs live in .build, never in git.
//
//   entryd-embed web ROOT WebAssets.swift
//   entryd-embed data ROOT EmbeddedTables.swift EmbeddedForms.swift
//   entryd-embed interfaces ROOT InterfaceDescriptions.swift WireNames.swift
//
// ROOT is the package's directory. A file is rewritten only when its text changes.

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch (arguments.first, arguments.count) {
    case ("web", 3):
        try WebGenerator.generate(web: join(arguments[1], "web"), output: arguments[2])
    case ("data", 4):
        try DataGenerator.generate(root: arguments[1], tablesOutput: arguments[2], formsOutput: arguments[3])
    case ("interfaces", 4):
        try InterfaceGenerator.generate(root: arguments[1], descriptionsOutput: arguments[2], namesOutput: arguments[3])
    default:
        FileHandle.standardError.write(Data("usage: entryd-embed web|data|interfaces ROOT OUTPUT...\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("entryd-embed: \(error)\n".utf8))
    exit(1)
}
