// libpq (Debian libpq5; headers from libpq-dev, PostgreSQL 15), the PostgreSQL
// client library, for EntryHub: loaded with dlopen(3) when the first hub
// connection is made, not linked, so an entryd on SQLite neither maps libpq
// nor the twenty libraries it pulls in (TLS, Kerberos, LDAP: about 5 MiB of
// resident memory and a fifth of start-up's dynamic loading). The PQ
// functions EntryHub calls are declared by libpq-fe.h as usual and defined in
// cpostgres.c as hidden trampolines into the loaded library.
#ifndef CPOSTGRES_H
#define CPOSTGRES_H

#include <postgresql/libpq-fe.h>

/// Loads libpq.so.5 and resolves every function EntryHub calls, once per
/// process (later calls return the first outcome at once). Thread-safe.
/// Returns NULL when loaded, or a message naming what failed (the library
/// missing, or a function it lacks); the message is static, never freed.
/// Call it before any other PQ function: they abort the process, saying
/// why, if the library cannot be loaded.
const char *cpg_load(void);

/// The diagnostic field codes PQresultErrorField takes (character macros,
/// which Swift does not import).
static inline int cpg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int cpg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }

#endif
