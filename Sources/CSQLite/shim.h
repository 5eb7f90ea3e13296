// Wrappers for sqlite3 calls Swift cannot make directly (variadic functions,
// the SQLITE_TRANSIENT destructor constant), as GRDB does.
#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL).
static inline int csqlite_db_config_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on): with 0, SQLite keeps no memory
/// statistics and so takes no global mutex around each allocation
/// (sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus).
/// Only valid before sqlite3_initialize(); returns SQLITE_MISUSE after it.
static inline int csqlite_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
