// libpq (Debian libpq-dev, PostgreSQL 15): the C client library, for EntryHub.
#include <libpq-fe.h>

/// The diagnostic field codes PQresultErrorField takes (character macros,
/// which Swift does not import).
static inline int cpg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int cpg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
