// entryctl: the command-line client of entryd. Wiring only; see EntryCtl.swift.
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

exit(EntryCtl.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
