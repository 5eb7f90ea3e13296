// entryctl: the command-line client of entryd. Wiring only; see EntryCtl.swift.
@preconcurrency import Glibc
import Foundation

exit(
    EntryCtl.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
