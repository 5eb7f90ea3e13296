// The terminal side of `entryctl add -i` / `edit -i`: raw mode, the alternate
// screen, window size, signals, and writing a drawn Screen.
//
// Why plain termios and ANSI escapes rather than ncursesw (Debian libncursesw6):
// - What is drawn is a handful of lines redrawn whole on each key; curses'
//   strength (optimising updates on slow, varied terminals) buys nothing here,
//   and every terminal people use today (xterm, VTE, kitty, tmux, screen, the
//   Linux console, Windows Terminal over SSH) speaks the same ECMA-48 subset:
//   CUP, EL, SGR, DECTCEM, the xterm alternate screen (1049) and bracketed
//   paste (2004). Those are all this file sends.
// - Layout and key decoding must be unit-tested without a terminal (the
//   EntryClient Interactive module: FormRenderer produces lines, KeyDecoder reads
//   bytes). With curses, drawing and input would live inside the library
//   (wgetch decides what a key is, its own ESC delay), and tests could only
//   scrape a terminal.
// - Width: curses needs the right locale set and a wide-character build to
//   place Chinese and flag emoji; we already measure with glibc's wcwidth
//   (DisplayWidth), the same tables curses would consult, and never depend on
//   the process locale or on terminfo entries being installed (minimal
//   containers, TERM=xterm-256color without ncurses-term).
// - No new system library target, pkg-config file or -dev package to install.
// The cost: no terminfo, so exotic terminals get the ECMA-48 spellings; a
// terminal that cannot do them is better served by `entryctl add FIELD=VALUE`.
@preconcurrency import Glibc
import EntryModel
import EntryProtocol
import EntryClient

/// The controlling terminal in raw mode with the alternate screen, until ``restore()``.
///
/// Input is read from stdin; output goes to the first of stdout, stderr that is
/// a terminal, so `id=$(entryctl add -i)` works (the form on stderr, the id on
/// stdout). SIGWINCH, SIGTERM, SIGHUP and SIGINT are turned into bytes on a
/// pipe (the self-pipe trick), so the event loop sees them through `poll(2)`.
final class TerminalDevice {
    /// The input descriptor (stdin).
    let input: Int32 = 0
    /// The output descriptor (a terminal: stdout or stderr).
    let output: Int32
    /// The read end of the signal pipe (valid once ``enter()`` ran).
    private(set) var signalFD: Int32 = -1
    private var saved = termios()
    private var active = false

    /// Why the form cannot run here; exit 64 (usage) with the message.
    struct NotATerminal: Error {}

    /// Checks for a terminal without changing it.
    /// - Throws: ``NotATerminal`` when stdin, or both stdout and stderr, are not terminals.
    init() throws {
        guard isatty(0) == 1 else { throw NotATerminal() }
        if isatty(1) == 1 { output = 1 } else if isatty(2) == 1 { output = 2 } else { throw NotATerminal() }
    }

    /// Enters raw mode, the alternate screen and bracketed paste; hides the
    /// cursor; routes the signals to ``signalFD`` (until then they act as usual,
    /// so Ctrl-C still stops a slow start).
    /// - Throws: ``SystemError`` when the terminal's modes cannot be read or set.
    func enter() throws {
        guard tcgetattr(input, &saved) == 0 else { throw SystemError("tcgetattr") }
        if signalFD < 0 { signalFD = SignalPipe.install() }
        var raw = saved
        // termios(3), cfmakeraw: no echo, no line editing, no signals from keys
        // (Ctrl-C, Ctrl-Z arrive as bytes), no XON/XOFF (Ctrl-S is "Done"), no CR→NL.
        raw.c_iflag &= ~tcflag_t(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        raw.c_cflag &= ~tcflag_t(CSIZE | PARENB)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else { throw SystemError("tcsetattr") }
        active = true
        write("\u{1B}[?1049h\u{1B}[?2004h\u{1B}[?25l\u{1B}[2J")
    }

    /// Leaves the alternate screen and raw mode (safe to call twice).
    func restore() {
        guard active else { return }
        active = false
        write("\u{1B}[0m\u{1B}[?2004l\u{1B}[?25h\u{1B}[?1049l")
        _ = tcsetattr(input, TCSAFLUSH, &saved)
        SignalPipe.uninstall()
    }

    /// The window size in columns and rows (80×24 when the terminal does not say).
    func size() -> (width: Int, height: Int) {
        var ws = winsize()
        if ioctl(output, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return (Int(ws.ws_col), Int(ws.ws_row))
        }
        return (80, 24)
    }

    /// Writes all of `text` to the terminal (retrying on EINTR and short writes).
    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Reads what is available on stdin (at most 4 KiB); empty at end of input.
    func read() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return n > 0 ? Array(buffer.prefix(n)) : []
        }
    }

    /// Draws `screen`: only the lines that differ from `previous` (all when it
    /// is `nil`), then the cursor (shown only when the screen has one).
    func draw(_ screen: Screen, previous: Screen?, colour: Bool) {
        var out = "\u{1B}[?25l"
        for (row, line) in screen.lines.enumerated() {
            if let previous, row < previous.lines.count, previous.lines[row] == line { continue }
            out += "\u{1B}[\(row + 1);1H" + line.rendered(colour: colour) + "\u{1B}[0m\u{1B}[K"
        }
        if let cursor = screen.cursor { out += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h" }
        write(out)
    }

    /// Clears the screen (after a resize, everything is drawn again).
    func clear() { write("\u{1B}[2J") }
}

/// The self-pipe for signals: the handler writes the signal number as one byte.
enum SignalPipe {
    nonisolated(unsafe) static var writeFD: Int32 = -1

    /// Creates the pipe and installs the handlers; returns the read end.
    static func install() -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return -1 }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        writeFD = fds[1]
        for sig in [SIGWINCH, SIGTERM, SIGHUP, SIGINT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                var byte = UInt8(truncatingIfNeeded: sig)
                _ = Glibc.write(SignalPipe.writeFD, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
        return fds[0]
    }

    /// Gives the signals their default actions back (the pipe stays open).
    static func uninstall() {
        for sig in [SIGWINCH, SIGTERM, SIGHUP, SIGINT] { signal(sig, SIG_DFL) }
    }
}
