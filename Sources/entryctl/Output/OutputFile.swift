@preconcurrency import Glibc
import EntryModel
import EntryProtocol
import EntryClient
import Foundation

/// Where `export` and `backup` write: standard output, or a file that appears
/// only when complete (written as `FILE.partial-PID`, `fsync`ed, then renamed;
/// removed on failure). Files are created mode 0600: form data is personal.
final class OutputFile {
    /// The final path, or `nil` for standard output.
    let path: String?
    private let temporary: String?
    private let stream: UnsafeMutablePointer<FILE>
    private var done = false

    /// Opens the temporary file next to `path`, or standard output when `path` is `nil` or `-`.
    /// - Throws: ``Refusal`` when the file cannot be created.
    init(path: String?) throws {
        guard let path, path != "-" else {
            self.path = nil
            temporary = nil
            stream = stdout
            return
        }
        // A symbolic link is followed: the file it names is replaced, not the link.
        let target =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map {
                $0.hasPrefix("/") ? $0 : (path as NSString).deletingLastPathComponent + "/" + $0
            } ?? path
        var st = stat()
        if stat(target, &st) == 0, st.st_mode & S_IFMT != S_IFREG {
            // A device, a FIFO or a socket is written in place, never replaced (`-o /dev/null`).
            guard st.st_mode & S_IFMT != S_IFDIR else {
                throw Refusal(zh: "“\(path)”是目录；请给出文件名", en: "'\(path)' is a directory; name a file")
            }
            let fd = open(target, O_WRONLY | O_CLOEXEC)
            guard fd >= 0, let file = fdopen(fd, "w") else {
                throw Refusal(
                    zh: "无法打开“\(path)”：\(String(cString: strerror(errno)))",
                    en: "cannot open '\(path)': \(String(cString: strerror(errno)))")
            }
            self.path = nil
            temporary = nil
            stream = file
            return
        }
        let directory = (target as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty,
            !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue
        {
            throw Refusal(
                zh: "无法写入“\(path)”：目录“\(directory)”不存在",
                en: "cannot write '\(path)': the directory '\(directory)' does not exist")
        }
        let temp = target + ".partial-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0, let file = fdopen(fd, "w") else {
            throw Refusal(
                zh: "无法创建“\(temp)”：\(String(cString: strerror(errno)))",
                en: "cannot create '\(temp)': \(String(cString: strerror(errno)))")
        }
        self.path = target
        temporary = temp
        stream = file
    }

    deinit { abandon() }

    /// Appends bytes.
    /// - Throws: ``Refusal`` on a write error (e.g. a full disk).
    func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        let n = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, stream) }
        guard n == bytes.count else {
            throw Refusal(
                zh: "无法写入“\(path ?? "标准输出")”：\(String(cString: strerror(errno)))",
                en: "cannot write '\(path ?? "standard output")': \(String(cString: strerror(errno)))")
        }
    }

    /// Appends UTF-8 text.
    func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// Flushes; for a file also `fsync`s, closes and renames it into place.
    /// - Throws: ``Refusal`` when any step fails (the temporary file is removed).
    func commit() throws {
        done = true
        guard let temporary, let path else {
            let failed = fflush(stream) != 0 || ferror(stream) != 0
            if stream != stdout { fclose(stream) }
            if failed {
                throw Refusal(
                    zh: "无法写出输出：\(String(cString: strerror(errno)))",
                    en: "cannot write the output: \(String(cString: strerror(errno)))")
            }
            return
        }
        let ok = fflush(stream) == 0 && fsync(fileno(stream)) == 0
        let reason = String(cString: strerror(errno))
        fclose(stream)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw Refusal(
                zh: "无法写入“\(path)”：\(ok ? String(cString: strerror(errno)) : reason)",
                en: "cannot write '\(path)': \(ok ? String(cString: strerror(errno)) : reason)")
        }
    }

    /// Runs `body`, which writes into this output, then ``commit()``s it; when
    /// either throws, ``abandon()``s it and rethrows. `progress` is finished
    /// either way.
    func produce(progress: ProgressLine, _ body: () throws -> Void) throws {
        defer { progress.finish() }
        do {
            try body()
            try commit()
        } catch {
            abandon()
            throw error
        }
    }

    /// Removes the temporary file (after a failure).
    func abandon() {
        guard !done else { return }
        done = true
        guard let temporary else { return }
        fclose(stream)
        unlink(temporary)
    }
}
