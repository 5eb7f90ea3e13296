// Trampolines for the libpq functions EntryHub calls (cpostgres.h). Each is
// hidden: it satisfies entryd's own references at link time and is never
// exported, so libpq's calls between its own functions cannot land here.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#pragma GCC visibility push(hidden)
#include "cpostgres.h"

/// Every function called through the trampolines below; one X per name.
#define CPG_FUNCTIONS(X) \
    X(PQbackendPID) X(PQclear) X(PQcmdTuples) X(PQconnectdbParams) X(PQconninfoFree) \
    X(PQconninfoParse) X(PQconsumeInput) X(PQenterPipelineMode) X(PQerrorMessage) \
    X(PQescapeIdentifier) X(PQexec) X(PQexecParams) X(PQexecPrepared) X(PQexitPipelineMode) \
    X(PQfinish) X(PQflush) X(PQfname) X(PQfreemem) X(PQgetResult) X(PQgetisnull) X(PQgetvalue) X(PQhost) \
    X(PQnfields) X(PQnotifies) X(PQntuples) X(PQpipelineSync) X(PQport) X(PQprepare) X(PQreset) \
    X(PQresultErrorField) X(PQresultErrorMessage) X(PQresultStatus) X(PQsendQueryParams) X(PQsendQueryPrepared) \
    X(PQsetNoticeProcessor) X(PQsocket) X(PQstatus) X(PQtransactionStatus)

/// The resolved functions, each of the type libpq-fe.h declares.
static struct {
#define CPG_FIELD(name) __typeof__(name) *name;
    CPG_FUNCTIONS(CPG_FIELD)
#undef CPG_FIELD
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char failure[512];

static void load(void) {
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure,
                 "libpq.so.5 could not be loaded (%s): install Debian's libpq5 to use a PostgreSQL hub", dlerror());
        return;
    }
#define CPG_RESOLVE(name) \
    if (!(api.name = (__typeof__(name) *)dlsym(library, #name))) { \
        snprintf(failure, sizeof failure, "libpq.so.5 has no %s: PostgreSQL 14 or later's libpq5 is needed", #name); \
        return; \
    }
    CPG_FUNCTIONS(CPG_RESOLVE)
#undef CPG_RESOLVE
    loaded = 1;
}

const char *cpg_load(void) {
    pthread_once(&once, load);
    return loaded ? NULL : failure;
}

/// The loaded functions; a call before a successful cpg_load is a bug in
/// entryd (EntryHub loads first), so it ends the process saying why.
static inline __typeof__(api) *pq(void) {
    if (cpg_load()) {
        fprintf(stderr, "entryd: %s\n", failure);
        abort();
    }
    return &api;
}

int PQbackendPID(const PGconn *c) { return pq()->PQbackendPID(c); }
void PQclear(PGresult *r) { pq()->PQclear(r); }
char *PQcmdTuples(PGresult *r) { return pq()->PQcmdTuples(r); }
PGconn *PQconnectdbParams(const char *const *k, const char *const *v, int expand) {
    return pq()->PQconnectdbParams(k, v, expand);
}
void PQconninfoFree(PQconninfoOption *o) { pq()->PQconninfoFree(o); }
PQconninfoOption *PQconninfoParse(const char *info, char **error) { return pq()->PQconninfoParse(info, error); }
int PQconsumeInput(PGconn *c) { return pq()->PQconsumeInput(c); }
int PQenterPipelineMode(PGconn *c) { return pq()->PQenterPipelineMode(c); }
char *PQerrorMessage(const PGconn *c) { return pq()->PQerrorMessage(c); }
char *PQescapeIdentifier(PGconn *c, const char *s, size_t n) { return pq()->PQescapeIdentifier(c, s, n); }
PGresult *PQexec(PGconn *c, const char *q) { return pq()->PQexec(c, q); }
PGresult *PQexecParams(PGconn *c, const char *q, int n, const Oid *types, const char *const *values,
                       const int *lengths, const int *formats, int resultFormat) {
    return pq()->PQexecParams(c, q, n, types, values, lengths, formats, resultFormat);
}
PGresult *PQexecPrepared(PGconn *c, const char *name, int n, const char *const *values,
                         const int *lengths, const int *formats, int resultFormat) {
    return pq()->PQexecPrepared(c, name, n, values, lengths, formats, resultFormat);
}
int PQexitPipelineMode(PGconn *c) { return pq()->PQexitPipelineMode(c); }
void PQfinish(PGconn *c) { pq()->PQfinish(c); }
int PQflush(PGconn *c) { return pq()->PQflush(c); }
char *PQfname(const PGresult *r, int field) { return pq()->PQfname(r, field); }
void PQfreemem(void *p) { pq()->PQfreemem(p); }
PGresult *PQgetResult(PGconn *c) { return pq()->PQgetResult(c); }
int PQgetisnull(const PGresult *r, int row, int field) { return pq()->PQgetisnull(r, row, field); }
char *PQgetvalue(const PGresult *r, int row, int field) { return pq()->PQgetvalue(r, row, field); }
char *PQhost(const PGconn *c) { return pq()->PQhost(c); }
int PQnfields(const PGresult *r) { return pq()->PQnfields(r); }
PGnotify *PQnotifies(PGconn *c) { return pq()->PQnotifies(c); }
int PQntuples(const PGresult *r) { return pq()->PQntuples(r); }
int PQpipelineSync(PGconn *c) { return pq()->PQpipelineSync(c); }
char *PQport(const PGconn *c) { return pq()->PQport(c); }
PGresult *PQprepare(PGconn *c, const char *name, const char *q, int n, const Oid *types) {
    return pq()->PQprepare(c, name, q, n, types);
}
void PQreset(PGconn *c) { pq()->PQreset(c); }
char *PQresultErrorField(const PGresult *r, int code) { return pq()->PQresultErrorField(r, code); }
char *PQresultErrorMessage(const PGresult *r) { return pq()->PQresultErrorMessage(r); }
ExecStatusType PQresultStatus(const PGresult *r) { return pq()->PQresultStatus(r); }
int PQsendQueryParams(PGconn *c, const char *q, int n, const Oid *types, const char *const *values,
                      const int *lengths, const int *formats, int resultFormat) {
    return pq()->PQsendQueryParams(c, q, n, types, values, lengths, formats, resultFormat);
}
int PQsendQueryPrepared(PGconn *c, const char *name, int n, const char *const *values, const int *lengths,
                        const int *formats, int resultFormat) {
    return pq()->PQsendQueryPrepared(c, name, n, values, lengths, formats, resultFormat);
}
PQnoticeProcessor PQsetNoticeProcessor(PGconn *c, PQnoticeProcessor f, void *arg) {
    return pq()->PQsetNoticeProcessor(c, f, arg);
}
int PQsocket(const PGconn *c) { return pq()->PQsocket(c); }
ConnStatusType PQstatus(const PGconn *c) { return pq()->PQstatus(c); }
PGTransactionStatusType PQtransactionStatus(const PGconn *c) { return pq()->PQtransactionStatus(c); }

#pragma GCC visibility pop
