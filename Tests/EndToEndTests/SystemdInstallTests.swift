import Foundation
import Testing

/// `make install` and the shipped units, checked with systemd's own tools
/// (no running systemd needed: systemd-analyze --offline, sysusers/tmpfiles --root).
@Suite(.serialized) struct SystemdInstallTests {
    static var canRun: Bool { which("make") != nil && which("systemd-analyze") != nil }

    /// Runs make in the package root with the built (debug) binaries, no release build.
    static func make(_ arguments: [String]) throws -> ProcessResult {
        try runProcess(
            which("make")!, ["-s", "-C", packageRoot, "BUILD=no", "BUILD_DIR=\(productsDirectory())"] + arguments,
            timeout: 60)
    }

    /// Every file `make install` puts under a root, relative to it.
    static func tree(_ root: String) -> Set<String> {
        let items = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return Set(items)
    }

    @Test(
        "make install DESTDIR=… lays out the expected tree; make uninstall removes it and keeps a changed configuration",
        .enabled(if: canRun, "skipped: make and systemd-analyze are needed; scripts/setup installs them"))
    func installTree() throws {
        let root = try serviceTestDirectory("destdir")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let installed = try Self.make(["install", "DESTDIR=\(root)"])
        #expect(installed.status == 0, "\(installed.stderr)")
        let expected: Set<String> = [
            "usr/local/bin/entryd", "usr/local/bin/entryctl", "usr/local/bin/entryd-web",
            "usr/local/lib/systemd/system/entryd.service", "usr/local/lib/systemd/system/entryd.socket",
            "usr/local/lib/systemd/system/entryd-web.service", "usr/local/lib/systemd/system/entryd-web.socket",
            "etc/entryd/entryd-web.conf", "usr/local/share/man/man8/entryd-web.8",
            "usr/local/lib/sysusers.d/entryd.conf", "usr/local/lib/tmpfiles.d/entryd.conf",
            "etc/entryd/entryd.conf", "etc/entryd/entryd.conf.d", "etc/entryd/forms/registration.conf",
            "usr/local/share/doc/entryd/README.md", "usr/local/share/doc/entryd/guide.md",
            "usr/local/share/doc/entryd/hub.md", "usr/local/share/doc/entryd/monitoring.md",
            "usr/local/share/doc/entryd/examples/entryd-alerts.yml",
            "usr/local/share/entryd/data/countries.tsv", "usr/local/share/entryd/data/cn_divisions.tsv",
            "usr/local/share/entryd/data/cn_divisions_retired.tsv", "usr/local/share/entryd/data/PROVENANCE.md",
        ]
        let files = Self.tree(root)
        #expect(expected.subtracting(files).isEmpty, "missing: \(expected.subtracting(files).sorted())")
        #expect(FileManager.default.isExecutableFile(atPath: root + "/usr/local/bin/entryd"))
        let unit = try String(contentsOfFile: root + "/usr/local/lib/systemd/system/entryd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/local/bin/entryd --config /etc/entryd/entryd.conf\n"))
        let webUnit = try String(
            contentsOfFile: root + "/usr/local/lib/systemd/system/entryd-web.service", encoding: .utf8)
        #expect(webUnit.contains("\nExecStart=/usr/local/bin/entryd-web --config /etc/entryd/entryd-web.conf\n"))

        // The installed configuration is valid as shipped, forms included.
        let check = try runProcess(
            root + "/usr/local/bin/entryd", ["--config", root + "/etc/entryd/entryd.conf", "--check-config"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("forms = \(root)/etc/entryd/forms\n"))
        let hub = try runProcess(
            root + "/usr/local/bin/entryd", ["--config", root + "/etc/entryd/hub.conf", "--check-config"])
        #expect(hub.status == 0, "\(hub.stderr)")
        #expect(hub.stdout.contains("database = postgresql://entryd@localhost:5432/entryd\n"))
        let template = try String(
            contentsOfFile: root + "/usr/local/lib/systemd/system/entryd@.service", encoding: .utf8)
        #expect(template.contains("\nExecStart=/usr/local/bin/entryd --config /etc/entryd/hub.conf --instance %i\n"))

        // A changed configuration survives uninstall; everything else goes.
        try "# local\nlocale = en\n".write(toFile: root + "/etc/entryd/entryd.conf", atomically: true, encoding: .utf8)
        let removed = try Self.make(["uninstall", "DESTDIR=\(root)"])
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = Self.tree(root).filter { !Self.isDirectory(root + "/" + $0) }
        #expect(left == ["etc/entryd/entryd.conf"])
    }

    static func isDirectory(_ path: String) -> Bool {
        var d: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &d) && d.boolValue
    }

    @Test(
        "make verify-units checks the units of the checkout before install, ExecStart= naming the build",
        .enabled(if: canRun, "skipped: make and systemd-analyze are needed; scripts/setup installs them"))
    func verifyUnitsBeforeInstall() throws {
        let verified = try Self.make(["verify-units"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stderr.isEmpty, "systemd-analyze verify: \(verified.stderr)")
        #expect(
            verified.stdout.contains("verify passed (ExecStart=\(productsDirectory())/entryd)"), "\(verified.stdout)")
        #expect(
            verified.stdout.contains("verify passed (ExecStart=\(productsDirectory())/entryd-web)"),
            "\(verified.stdout)")
    }

    @Test(
        "installed units (entryd and entryd-web) pass systemd-analyze verify without warnings and rate exposure ≤ 2.0; sysusers/tmpfiles create the users (entryd-web in group entryd) and the socket directory",
        .enabled(if: canRun, "skipped: make and systemd-analyze are needed; scripts/setup installs them"))
    func analyzeUnits() throws {
        let root = try serviceTestDirectory("prefix")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A PREFIX inside the temporary root, so that ExecStart= names a binary that exists.
        let installed = try Self.make(["install", "PREFIX=\(root)/usr", "SYSCONFDIR=\(root)/etc"])
        #expect(installed.status == 0, "\(installed.stderr)")
        let units = root + "/usr/lib/systemd/system"
        let analyze = which("systemd-analyze")!

        for daemon in ["entryd", "entryd-web"] {
            let verify = try runProcess(analyze, ["verify", units + "/\(daemon).socket", units + "/\(daemon).service"])
            #expect(verify.status == 0, "\(daemon)")
            #expect(verify.stderr.isEmpty, "systemd-analyze verify \(daemon): \(verify.stderr)")

            let security = try runProcess(
                analyze, ["security", "--offline=yes", "--threshold=20", units + "/\(daemon).service"])
            #expect(security.status == 0, "\(security.stdout)\(security.stderr)")
            let line =
                security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") }.map(String.init)
                ?? ""
            let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
            let exposure = try #require(score, "no exposure score in: \(security.stdout.suffix(300))")
            #expect(exposure <= 2.0, "\(daemon).service exposure \(exposure)")
        }
        // entryd-web may write nowhere and gets no privileges.
        let web = try String(contentsOfFile: units + "/entryd-web.service", encoding: .utf8)
        for line in [
            "User=entryd-web", "SupplementaryGroups=entryd", "ProtectSystem=strict", "NoNewPrivileges=yes",
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "Type=notify",
        ] {
            #expect(web.contains("\n" + line + "\n"), "entryd-web.service lacks \(line)")
        }
        for key in ["StateDirectory=", "RuntimeDirectory=", "LogsDirectory=", "CacheDirectory=", "ReadWritePaths="] {
            #expect(!web.contains("\n" + key), "entryd-web.service has \(key)")
        }

        // sysusers.d creates the entryd user and group; tmpfiles.d the socket directory.
        let image = root + "/image"
        try FileManager.default.createDirectory(atPath: image + "/etc", withIntermediateDirectories: true)
        if let sysusers = which("systemd-sysusers"), let tmpfiles = which("systemd-tmpfiles") {
            let users = try runProcess(sysusers, ["--root=\(image)", root + "/usr/lib/sysusers.d/entryd.conf"])
            #expect(users.status == 0, "\(users.stderr)")
            let passwd = try String(contentsOfFile: image + "/etc/passwd", encoding: .utf8)
            let entry = try #require(passwd.split(separator: "\n").first { $0.hasPrefix("entryd:") })
            #expect(entry.hasSuffix(":/var/lib/entryd:/usr/sbin/nologin"))
            #expect(passwd.split(separator: "\n").contains { $0.hasPrefix("entryd-web:") }, "\(passwd)")
            // entryd-web is a member of group entryd (to open the socket).
            let group = try String(contentsOfFile: image + "/etc/group", encoding: .utf8)
            let members = group.split(separator: "\n").first { $0.hasPrefix("entryd:") }?.split(
                separator: ":", omittingEmptySubsequences: false
            ).last
            #expect(members?.split(separator: ",").contains("entryd-web") == true, "\(group)")
            let dirs = try runProcess(
                tmpfiles, ["--root=\(image)", "--create", root + "/usr/lib/tmpfiles.d/entryd.conf"])
            #expect(dirs.status == 0, "\(dirs.stderr)")
            let attributes = try FileManager.default.attributesOfItem(atPath: image + "/run/entryd")
            #expect((attributes[.posixPermissions] as? Int) == 0o750)
            let uid = entry.split(separator: ":")[2]
            #expect((attributes[.ownerAccountID] as? NSNumber)?.stringValue == String(uid))
        }
    }

    @Test("mk/docs.mk installs the pages and the completion under DESTDIR and removes them")
    func docsInstall() throws {
        guard let make = which("make") else { return }
        let dest = try TemporaryDirectory()
        defer { dest.remove() }
        let makefile = dest.url.appendingPathComponent("Makefile").path
        try "include mk/docs.mk\n".write(toFile: makefile, atomically: true, encoding: .utf8)
        let install = try runProcess(
            make, ["-C", packageRoot, "-f", makefile, "install-docs", "DESTDIR=\(dest.url.path)/root", "PREFIX=/usr"])
        #expect(install.status == 0, "\(install.stderr)")
        for file in [
            "usr/share/man/man8/entryd.8", "usr/share/man/man8/entryd-web.8", "usr/share/man/man1/entryctl.1",
            "usr/share/man/man5/entryd.conf.5",
            "usr/share/bash-completion/completions/entryctl",
        ] {
            #expect(FileManager.default.fileExists(atPath: dest.url.path + "/root/" + file), "\(file)")
        }
        let uninstall = try runProcess(
            make, ["-C", packageRoot, "-f", makefile, "uninstall-docs", "DESTDIR=\(dest.url.path)/root", "PREFIX=/usr"])
        #expect(uninstall.status == 0)
        #expect(!FileManager.default.fileExists(atPath: dest.url.path + "/root/usr/share/man/man1/entryctl.1"))
        #expect(!FileManager.default.fileExists(atPath: dest.url.path + "/root/usr/share/man/man8/entryd-web.8"))
    }

    @Test("config/entryd-web.conf documents every key of entryd-web(8) in [web], each commented out with its default")
    func webConfig() throws {
        let text = try String(contentsOfFile: packageRoot + "/config/entryd-web.conf", encoding: .utf8)
        let page = try String(contentsOfFile: packageRoot + "/doc/man/entryd-web.8", encoding: .utf8)
        #expect(text.contains("\n[web]\n"))
        let keys = [
            "listen", "socket", "users", "tls-certificate", "tls-key", "behind-proxy", "max-connections",
            "max-body", "session-idle", "login-attempts",
        ]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for key in keys {
            let at = try #require(
                lines.firstIndex { $0.hasPrefix("# \(key) = ") }, "config/entryd-web.conf lacks '# \(key) = '")
            // The comment block above the key gives its default.
            let block = lines[..<at].reversed().prefix { $0.hasPrefix("#") }
            #expect(block.contains { $0.contains("Default") }, "\(key): no Default in its comment")
            let roff = key.replacingOccurrences(of: "-", with: "\\-")
            #expect(page.contains(".B " + roff) || page.contains(".BR " + roff), "entryd-web.8 lacks \(key)")
        }
        // Nothing is set: every key line is commented out.
        #expect(!lines.contains { line in keys.contains { line.hasPrefix($0 + " =") } })
        #expect(
            text.contains("# listen = 127.0.0.1:8080") && text.contains("# max-body = 1M")
                && text.contains("# login-attempts = 5"))
    }
}
