import Testing
@testable import EntryHub
import EntryServer

/// What entryd reads and shows of a PostgreSQL database (issue 19): the `db`
/// and `instance` keys, URIs told from paths, passwords never shown, and the
/// SQL dialect the store's statements are translated to.
@Suite struct HubSettingsTests {
    @Test("db and database take a URI as it is and a path relative to the file; instance takes a name")
    func keys() throws {
        let uri = "postgresql://entryd@db.example:5432/entryd?sslmode=require"
        #expect(try DaemonConfiguration.parse(text: "db = \(uri)", path: "/etc/entryd/hub.conf").databasePath == uri)
        #expect(
            try DaemonConfiguration.parse(text: "database = postgres://h/d", path: "/etc/entryd/hub.conf").databasePath
                == "postgres://h/d")
        #expect(
            try DaemonConfiguration.parse(text: "db = data/e.db", path: "/etc/entryd/hub.conf").databasePath
                == "/etc/entryd/data/e.db")
        #expect(try DaemonConfiguration.parse(text: "instance = hub-1.a_b", path: "/x.conf").instance == "hub-1.a_b")
        #expect(
            DaemonConfiguration.isValidInstance("hub-2") && !DaemonConfiguration.isValidInstance("hub/2")
                && !DaemonConfiguration.isValidInstance("") && !DaemonConfiguration.isValidInstance("中"))
    }

    @Test(
        "the state directory: --state-directory, $STATE_DIRECTORY, $XDG_STATE_HOME/entryd, ~/.local/state/entryd; the default database in it"
    )
    func stateDirectory() {
        let env = ["STATE_DIRECTORY": "/var/lib/entryd:/var/lib/other", "XDG_STATE_HOME": "/x", "HOME": "/home/u"]
        #expect(DaemonPaths.stateDirectory(flag: "/tmp/t", environment: env) == "/tmp/t")
        #expect(DaemonPaths.stateDirectory(flag: nil, environment: env) == "/var/lib/entryd")
        #expect(DaemonPaths.stateDirectory(environment: ["XDG_STATE_HOME": "/x", "HOME": "/home/u"]) == "/x/entryd")
        #expect(DaemonPaths.stateDirectory(flag: "", environment: ["HOME": "/home/u"]) == "/home/u/.local/state/entryd")
        #expect(DaemonPaths.database(flag: nil, stateDirectory: "/tmp/t", environment: env) == "/tmp/t/entries.db")
        #expect(DaemonPaths.database(flag: "/d/e.db", stateDirectory: "/tmp/t", environment: env) == "/d/e.db")
        #expect(
            DaemonPaths.database(flag: nil, stateDirectory: "/tmp/t", environment: ["ENTRYD_DB": "/e.db"]) == "/e.db")
    }

    @Test("a URI is shown without its password, in the user part or as a parameter; a path as it is")
    func redacted() {
        #expect(DaemonPaths.isServerURI("postgresql://h/d") && DaemonPaths.isServerURI("postgres://h/d"))
        #expect(!DaemonPaths.isServerURI("/var/lib/entryd/postgresql://x") && !DaemonPaths.isServerURI("entries.db"))
        #expect(DaemonPaths.redacted("postgresql://entryd:s3cr%40t@db:5432/e") == "postgresql://entryd:***@db:5432/e")
        #expect(
            DaemonPaths.redacted("postgresql:///e?host=/run/pg&password=s3cret&user=u")
                == "postgresql:///e?host=/run/pg&password=***&user=u")
        #expect(DaemonPaths.redacted("postgresql://u@h/e?password=x") == "postgresql://u@h/e?password=***")
        #expect(DaemonPaths.redacted("postgresql://u@h/e") == "postgresql://u@h/e")
        // libpq percent-decodes option names, and sslpassword is a secret too.
        #expect(
            DaemonPaths.redacted("postgresql://u@/e?host=/run/pg&pass%77ord=TopSecret2&port=5432")
                == "postgresql://u@/e?host=/run/pg&pass%77ord=***&port=5432")
        #expect(DaemonPaths.redacted("postgresql://u@/e?sslpassword=TopSecret3") == "postgresql://u@/e?sslpassword=***")
        #expect(
            DaemonPaths.redacted("postgresql://u@/e?PASSWORD=x&application_name=a%3Db")
                == "postgresql://u@/e?PASSWORD=***&application_name=a%3Db")
        #expect(DaemonPaths.redacted("/var/lib/entryd/a:b@c.db") == "/var/lib/entryd/a:b@c.db")
    }

    @Test(
        "SQLite's dialect in PostgreSQL's: placeholders in order and by number, not inside quotes; BEGIN IMMEDIATE, INSERT OR IGNORE, instr"
    )
    func dialect() {
        #expect(
            PGDialect.translate("SELECT a FROM t WHERE b = ? AND c > ? LIMIT ?")
                == "SELECT a FROM t WHERE b = $1 AND c > $2 LIMIT $3")
        #expect(
            PGDialect.translate("WHERE (CAST(?1 AS TEXT) IS NULL OR entry = ?1) AND (?2 OR r = 0)")
                == "WHERE (CAST($1 AS TEXT) IS NULL OR entry = $1) AND ($2 OR r = 0)")
        #expect(PGDialect.translate("SELECT '?', 'it''s ?' WHERE x = ?") == "SELECT '?', 'it''s ?' WHERE x = $1")
        #expect(PGDialect.translate("BEGIN IMMEDIATE") == "BEGIN")
        #expect(
            PGDialect.translate("INSERT OR IGNORE INTO folded (hlc, node, seq) VALUES (?, ?, ?)")
                == "INSERT INTO folded (hlc, node, seq) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
        #expect(
            PGDialect.translate("SELECT id FROM entries WHERE instr(name_folded, ?) > 0")
                == "SELECT id FROM entries WHERE strpos(name_folded, $1) > 0")
        #expect(PGDialect.opens("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") && !PGDialect.opens("COMMIT"))
        #expect(PGDialect.closes("ROLLBACK") && PGDialect.closes("COMMIT") && !PGDialect.closes("ROLLBACK TO job"))
    }
}
