// A fault-injecting SQLite VFS for tests, after the test VFS shims of SQLite's
// own test suite (sqlite.org/testing.html, "I/O error testing"): it wraps the
// default VFS and, on demand, fails writes with SQLITE_FULL (a full disk) or
// fsyncs with SQLITE_IOERR_FSYNC. Linked only into the test targets.
#ifndef CSQLITE_FAULTS_H
#define CSQLITE_FAULTS_H

/// Registers the VFS under the name "entryd-faults" (idempotent).
/// Returns SQLITE_OK (0) or an SQLite error code.
int csqlite_faults_register(void);

/// From now on, every xWrite fails with SQLITE_FULL while `on` is non-zero.
void csqlite_faults_fail_writes(int on);

/// From now on, every xSync fails with SQLITE_IOERR_FSYNC while `on` is non-zero.
void csqlite_faults_fail_syncs(int on);

/// Writes and syncs refused so far (for assertions that faults were hit).
long csqlite_faults_refused(void);
#endif
