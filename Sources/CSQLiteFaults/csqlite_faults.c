#include "csqlite_faults.h"
#include <sqlite3.h>
#include <string.h>

static sqlite3_vfs fault_vfs;
static sqlite3_vfs *base_vfs;
static volatile int fail_writes, fail_syncs;
static volatile long refused;

typedef struct FaultFile {
    sqlite3_file base;      /* pMethods points at fault_io */
    sqlite3_file *real;     /* the wrapped file, allocated right after this struct */
} FaultFile;

static sqlite3_io_methods fault_io;
#define REAL(f) (((FaultFile *)(f))->real)

static int f_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
    if (fail_writes) { __sync_fetch_and_add(&refused, 1); return SQLITE_FULL; }
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 s) { return REAL(f)->pMethods->xTruncate(REAL(f), s); }
static int f_sync(sqlite3_file *f, int flags) {
    if (fail_syncs) { __sync_fetch_and_add(&refused, 1); return SQLITE_IOERR_FSYNC; }
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int f_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int f_check(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int f_control(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int f_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_dev(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int f_shmmap(sqlite3_file *f, int p, int s, int e, void volatile **pp) { return REAL(f)->pMethods->xShmMap(REAL(f), p, s, e, pp); }
static int f_shmlock(sqlite3_file *f, int o, int n, int fl) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void f_shmbarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shmunmap(sqlite3_file *f, int d) { return REAL(f)->pMethods->xShmUnmap(REAL(f), d); }
static int f_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, pp); }
static int f_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out) {
    (void)vfs;
    FaultFile *ff = (FaultFile *)file;
    ff->real = (sqlite3_file *)&ff[1];
    int rc = base_vfs->xOpen(base_vfs, name, ff->real, flags, out);
    if (rc != SQLITE_OK) { file->pMethods = 0; return rc; }
    /* Same version as the real methods, so WAL shared memory is forwarded too. */
    fault_io.iVersion = ff->real->pMethods->iVersion;
    file->pMethods = &fault_io;
    return SQLITE_OK;
}
static int v_delete(sqlite3_vfs *v, const char *n, int s) { (void)v; return base_vfs->xDelete(base_vfs, n, s); }
static int v_access(sqlite3_vfs *v, const char *n, int f, int *r) { (void)v; return base_vfs->xAccess(base_vfs, n, f, r); }
static int v_fullpath(sqlite3_vfs *v, const char *n, int sz, char *o) { (void)v; return base_vfs->xFullPathname(base_vfs, n, sz, o); }
static void *v_dlopen(sqlite3_vfs *v, const char *n) { (void)v; return base_vfs->xDlOpen(base_vfs, n); }
static void v_dlerror(sqlite3_vfs *v, int n, char *e) { (void)v; base_vfs->xDlError(base_vfs, n, e); }
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return base_vfs->xDlSym(base_vfs, h, s); }
static void v_dlclose(sqlite3_vfs *v, void *h) { (void)v; base_vfs->xDlClose(base_vfs, h); }
static int v_random(sqlite3_vfs *v, int n, char *o) { (void)v; return base_vfs->xRandomness(base_vfs, n, o); }
static int v_sleep(sqlite3_vfs *v, int us) { (void)v; return base_vfs->xSleep(base_vfs, us); }
static int v_time(sqlite3_vfs *v, double *t) { (void)v; return base_vfs->xCurrentTime(base_vfs, t); }
static int v_lasterr(sqlite3_vfs *v, int n, char *e) { (void)v; return base_vfs->xGetLastError(base_vfs, n, e); }
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *t) { (void)v; return base_vfs->xCurrentTimeInt64(base_vfs, t); }

int csqlite_faults_register(void) {
    if (base_vfs) return SQLITE_OK;
    sqlite3_vfs *b = sqlite3_vfs_find(0);
    if (!b) return SQLITE_ERROR;
    static const sqlite3_io_methods io = {
        3, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_check, f_control, f_sector, f_dev,
        f_shmmap, f_shmlock, f_shmbarrier, f_shmunmap, f_fetch, f_unfetch,
    };
    fault_io = io;
    memset(&fault_vfs, 0, sizeof fault_vfs);
    fault_vfs.iVersion = 2;
    fault_vfs.szOsFile = (int)sizeof(FaultFile) + b->szOsFile;
    fault_vfs.mxPathname = b->mxPathname;
    fault_vfs.zName = "entryd-faults";
    fault_vfs.xOpen = v_open; fault_vfs.xDelete = v_delete; fault_vfs.xAccess = v_access;
    fault_vfs.xFullPathname = v_fullpath; fault_vfs.xDlOpen = v_dlopen; fault_vfs.xDlError = v_dlerror;
    fault_vfs.xDlSym = v_dlsym; fault_vfs.xDlClose = v_dlclose; fault_vfs.xRandomness = v_random;
    fault_vfs.xSleep = v_sleep; fault_vfs.xCurrentTime = v_time; fault_vfs.xGetLastError = v_lasterr;
    fault_vfs.xCurrentTimeInt64 = v_time64;
    base_vfs = b;
    return sqlite3_vfs_register(&fault_vfs, 0);
}

void csqlite_faults_fail_writes(int on) { fail_writes = on; }
void csqlite_faults_fail_syncs(int on) { fail_syncs = on; }
long csqlite_faults_refused(void) { return refused; }
