// Wrappers for sqlite3 calls Swift cannot make directly (variadic functions,
// the SQLITE_TRANSIENT destructor constant), as GRDB does.
#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL).
static inline int csqlite_db_config_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}
