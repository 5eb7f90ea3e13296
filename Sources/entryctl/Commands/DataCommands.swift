/// The data commands: export, import, backup (issue 8).
enum DataCommands {
    static let all = [ExportCommand.command, ImportCommand.command, BackupCommand.command]
}
