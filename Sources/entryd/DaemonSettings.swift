import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation

/// Everything the daemon takes from its configuration, resolved: the file and
/// drop-ins, the command-line flags over them, then the environment and the
/// embedded defaults for paths left open, and the forms loaded.
struct DaemonSettings {
    var config: DaemonConfiguration
    var socketPath: String
    var databasePath: String
    /// The user named ``databasePath`` (`--db`, `database`, `$ENTRYD_DB`): its directory must exist.
    var databaseIsNamed: Bool
    /// `nil`: the built-in registration form only.
    var formsDirectory: String?
    var forms: FormRegistry
    /// What to do with a database last opened at another place (``Options/copies``).
    var copies: CopiedDatabasePolicy = .refuse
    /// This instance's name: `--instance`, `instance`, else the host name.
    var instance: String
    /// Where this instance keeps its marker file when its database is on a
    /// server: `--state-directory`, `$STATE_DIRECTORY`, `$XDG_STATE_HOME/entryd`,
    /// `~/.local/state/entryd`.
    var stateDirectory: String

    /// Reads the configuration and the forms.
    /// - Throws: ``ConfigurationError`` (file, line, key) or
    ///   `FormDefinitionError` (form file and line); both mean exit 78 at
    ///   start-up and a refused reload later.
    static func load(_ options: Options, environment env: [String: String]) throws -> DaemonSettings {
        var config = try DaemonConfiguration.load(path: options.configPath)
        options.apply(to: &config)
        let socket = DaemonPaths.socket(flag: options.socket ?? config.socketPath, environment: env)
        let database = DaemonPaths.database(
            flag: options.database ?? config.databasePath, stateDirectory: options.stateDirectory,
            environment: env)
        let named = DaemonPaths.databaseIsNamed(flag: options.database ?? config.databasePath, environment: env)
        let envForms = env["ENTRYD_FORMS"].flatMap { $0.isEmpty ? nil : $0 }
        let formsDirectory = options.formsDirectory ?? config.formsDirectory ?? envForms
        let forms = try formsDirectory.map { try FormRegistry.load(directory: $0) } ?? FormRegistry.builtIn
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "entryd"
        let state = DaemonPaths.stateDirectory(flag: options.stateDirectory, environment: env)
        return DaemonSettings(
            config: config, socketPath: socket, databasePath: database, databaseIsNamed: named,
            formsDirectory: formsDirectory,
            forms: forms, copies: options.copies,
            instance: config.instance ?? (DaemonConfiguration.isValidInstance(host) ? host : "entryd"),
            stateDirectory: state)
    }
}
