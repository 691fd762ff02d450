/* sqlite: the embedded index backend of the result store, <store>/results.db (SQLite in WAL
 * mode with a busy timeout, so several mlbench processes can write at once; one transaction per
 * result). The file carries an application id and a schema version (PRAGMA application_id,
 * user_version): an index of an older version is reset and rebuilt from the result files, a
 * newer one or a foreign file is refused untouched. Schema and rationale: docs/store.md. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

#include <sqlite3.h>

#include "util/log.h"
#include "util/xalloc.h"
#include "store/store_ops.h"

#define SQLITE_APP_ID 0x6d6c6273    /* "mlbs": marks the file as an mlbench index */
#define SQLITE_SCHEMA_VERSION 2     /* PRAGMA user_version of the tables below (2: file stamps) */
#define SQLITE_BUSY_MS 30000        /* how long a writer waits for another one */

static const char schema_sql[] =
    "CREATE TABLE results ("
    " id TEXT PRIMARY KEY, path TEXT NOT NULL, label TEXT, command TEXT NOT NULL, host TEXT,"
    " mlbench_commit TEXT, workdir_commit TEXT, created TEXT NOT NULL, status TEXT NOT NULL,"
    " runs_measured INTEGER, runs_ok INTEGER, wall_n INTEGER, wall_median_ns REAL,"
    " wall_ci_low_ns REAL, wall_ci_high_ns REAL, wall_ci_level REAL, wall_mad_ns REAL,"
    " file_mtime_ns INTEGER, file_size INTEGER);"
    "CREATE INDEX results_created ON results(created, id);"
    "CREATE INDEX results_label ON results(label, created);"
    "CREATE TABLE stages ("
    " result_id TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,"
    " depth INTEGER NOT NULL, n INTEGER, median_ns REAL, ci_low_ns REAL, ci_high_ns REAL,"
    " ci_level REAL, mad_ns REAL, PRIMARY KEY (result_id, position));"
    "CREATE INDEX stages_name ON stages(name);";

struct sqlite_index {
    sqlite3 *db;
    char *path;
    bool in_memory; /* results.db could not be written: an index of this command alone */
};

/* The system's reason behind SQLite's "disk I/O error" or "unable to open" ("", ": No space
 * left on device"): SQLite's message alone does not say what to do. Only for those codes: for
 * others the saved errno is an older one. */
static const char *system_reason(sqlite3 *db, char *buf, size_t len)
{
    int code = sqlite3_extended_errcode(db) & 0xff, e = sqlite3_system_errno(db);
    buf[0] = '\0';
    if (e > 0 && (code == SQLITE_IOERR || code == SQLITE_CANTOPEN))
        snprintf(buf, len, " (%s)", strerror(e));
    return buf;
}

static void db_error(sqlite3 *db, const char *path, const char *what, char *err, size_t errlen)
{
    char why[128];
    snprintf(err, errlen, "%s: %s: %s%s", path, what, sqlite3_errmsg(db),
             system_reason(db, why, sizeof why));
}

/* Runs statements that return nothing. */
static int exec(struct sqlite_index *x, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(x->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        char why[128];
        snprintf(err, errlen, "%s: %s%s", x->path, msg ? msg : sqlite3_errmsg(x->db),
                 system_reason(x->db, why, sizeof why));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* The first column of a one-row query as an integer; -1 with err on failure, and sets
 * *notadb when the file is not a SQLite database. */
static int query_int(struct sqlite_index *x, const char *sql, long long *out, int *rc_out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(x->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    *rc_out = rc;
    return rc == SQLITE_OK ? 0 : -1;
}

#define OPEN_CORRUPT (-2) /* open_locked: the index is damaged (it is rebuilt from the files) */

struct header {
    long long app_id, version, objects;
};

static int read_header(struct sqlite_index *x, struct header *h, char *err, size_t errlen)
{
    int rc = SQLITE_OK;
    if (query_int(x, "PRAGMA application_id", &h->app_id, &rc) < 0 ||
        query_int(x, "PRAGMA user_version", &h->version, &rc) < 0 ||
        query_int(x, "SELECT count(*) FROM sqlite_master", &h->objects, &rc) < 0) {
        if (rc == SQLITE_NOTADB)
            snprintf(err, errlen, "'%s' is not an mlbench store: not a SQLite database; move it "
                     "away (the result files in runs/ are kept and will be indexed again) or "
                     "choose another --store", x->path);
        else
            db_error(x->db, x->path, "cannot read the store index", err, errlen);
        return (rc & 0xff) == SQLITE_CORRUPT ? OPEN_CORRUPT : -1;
    }
    return 0;
}

/* Creates the tables in an empty file, or replaces those of an older version; inside one
 * immediate transaction, re-reading the header so two processes starting at once agree. */
static int init_schema(struct sqlite_index *x, bool *fresh, char *err, size_t errlen)
{
    if (exec(x, "BEGIN IMMEDIATE", err, errlen) < 0)
        return -1;
    struct header h;
    if (read_header(x, &h, err, errlen) < 0)
        goto fail;
    if (h.app_id == SQLITE_APP_ID && h.version == SQLITE_SCHEMA_VERSION)
        return exec(x, "COMMIT", err, errlen); /* another process did it meanwhile */
    if (h.app_id == SQLITE_APP_ID && h.version < SQLITE_SCHEMA_VERSION) {
        /* An older index: its rows are rebuilt from the result files, the truth. */
        if (exec(x, "DROP TABLE IF EXISTS stages; DROP TABLE IF EXISTS results;", err,
                 errlen) < 0)
            goto fail;
    } else if (h.app_id != 0 || h.version != 0 || h.objects != 0) {
        snprintf(err, errlen, "'%s' is not an mlbench store (it changed while being opened)",
                 x->path);
        goto fail;
    }
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
             SQLITE_APP_ID, SQLITE_SCHEMA_VERSION);
    if (exec(x, schema_sql, err, errlen) < 0 || exec(x, pragmas, err, errlen) < 0)
        goto fail;
    if (exec(x, "COMMIT", err, errlen) < 0)
        goto fail;
    *fresh = true;
    return 0;
fail:
    sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static void sqlite_close(void *handle)
{
    struct sqlite_index *x = handle;
    if (!x)
        return;
    sqlite3_close(x->db);
    free(x->path);
    free(x);
}

/* Opens, checks and if need be creates the index; the caller holds the setup lock. */
static int open_locked(struct sqlite_index *x, bool *fresh, char *err, size_t errlen)
{
    if (sqlite3_open_v2(x->path, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        db_error(x->db, x->path, "cannot open the store index", err, errlen);
        return -1;
    }
    sqlite3_busy_timeout(x->db, SQLITE_BUSY_MS);
    /* One read transaction: the three figures from one snapshot. */
    struct header h;
    if (exec(x, "BEGIN", err, errlen) < 0)
        return -1;
    int hrc = read_header(x, &h, err, errlen);
    if (hrc < 0) {
        sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
        return hrc;
    }
    if (exec(x, "COMMIT", err, errlen) < 0)
        return -1;
    bool empty = h.app_id == 0 && h.version == 0 && h.objects == 0;
    if (!empty && h.app_id != SQLITE_APP_ID) {
        snprintf(err, errlen, "'%s' is not an mlbench store: a SQLite database of another "
                 "program (application id %lld); choose another --store", x->path, h.app_id);
        return -1;
    }
    if (h.version > SQLITE_SCHEMA_VERSION) {
        snprintf(err, errlen, "'%s' is an mlbench store of version %lld, newer than this mlbench "
                 "reads (%d): use a newer mlbench, or choose another --store", x->path,
                 h.version, SQLITE_SCHEMA_VERSION);
        return -1;
    }
    /* WAL: readers do not block the writer, and a commit does not wait for an fsync of the
     * database file (synchronous=NORMAL keeps it consistent; the JSON files are the truth).
     * The mode is kept in the file: set once, by whoever creates the index. */
    sqlite3_stmt *st = NULL;
    bool wal = sqlite3_prepare_v2(x->db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
               sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
               !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    if ((!wal && exec(x, "PRAGMA journal_mode=WAL", err, errlen) < 0) ||
        exec(x, "PRAGMA synchronous=NORMAL", err, errlen) < 0)
        return -1;
    if ((empty || h.version < SQLITE_SCHEMA_VERSION) && init_schema(x, fresh, err, errlen) < 0)
        return -1;
    /* A damaged page shows only when read: checked once per open (milliseconds for thousands
     * of results), so that no command is blocked by "database disk image is malformed". */
    st = NULL;
    bool ok = sqlite3_prepare_v2(x->db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
              sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
              !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    if (!ok) {
        snprintf(err, errlen, "%s: the store index is damaged", x->path);
        return OPEN_CORRUPT;
    }
    return 0;
}

/* The index is derived data (the result files are the truth): a damaged one is set aside as
 * results.db.corrupt-TIME, for whoever wants to look at it, and a new one is made. */
static int set_aside(struct sqlite_index *x, char *err, size_t errlen)
{
    sqlite3_close(x->db);
    x->db = NULL;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
    char *aside = xasprintf("%s.corrupt-%s", x->path, when);
    int rc = rename(x->path, aside);
    if (rc == 0) {
        log_warn("the store index %s was damaged: it is kept as %s, and a new one is built from "
                 "the result files", x->path, aside);
        char *side = xasprintf("%s-wal", x->path);
        unlink(side);
        free(side);
        side = xasprintf("%s-shm", x->path);
        unlink(side);
        free(side);
    } else {
        snprintf(err, errlen, "%s: the store index is damaged and cannot be set aside: %s (move "
                 "it away; the result files in runs/ are kept)", x->path, strerror(errno));
    }
    free(aside);
    return rc;
}

/* A store whose index cannot be written (a read-only directory or file, another user's store)
 * is still read: an index in memory is built from the result files for this command alone. */
static int open_in_memory(struct sqlite_index *x, bool *fresh, char *err, size_t errlen)
{
    sqlite3_close(x->db);
    x->db = NULL;
    if (sqlite3_open_v2(":memory:", &x->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        db_error(x->db, x->path, "cannot make an index in memory", err, errlen);
        return -1;
    }
    x->in_memory = true;
    return init_schema(x, fresh, err, errlen);
}

static int sqlite_open(const char *dir, void **handle, bool *fresh, char *err, size_t errlen)
{
    struct sqlite_index *x = xcalloc(1, sizeof *x);
    x->path = xasprintf("%s/%s", dir, STORE_INDEX_FILE);
    *fresh = false;
    /* Setting up a new index (creating the file, switching it to WAL, creating the tables) is
     * not safe against another process doing the same: SQLite answers "database is locked" or
     * an I/O error to one of them. mlbench processes take turns with a lock on the store
     * directory for the few milliseconds of opening; the rest is SQLite's own locking. Without
     * the lock (a file system that has none) the open goes on. */
    int lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock >= 0) {
        while (flock(lock, LOCK_EX) < 0 && errno == EINTR)
            ;
    }
    int rc = open_locked(x, fresh, err, errlen);
    if (rc == OPEN_CORRUPT && set_aside(x, err, errlen) == 0)
        rc = open_locked(x, fresh, err, errlen);
    if (rc == 0 && sqlite3_db_readonly(x->db, "main") == 1)
        rc = open_in_memory(x, fresh, err, errlen);
    else if (rc < 0 && access(x->path, F_OK) == 0 && access(x->path, W_OK) < 0 && errno == EACCES)
        rc = open_in_memory(x, fresh, err, errlen);
    if (lock >= 0)
        close(lock); /* releases the lock */
    if (rc < 0) {
        sqlite_close(x);
        return -1;
    }
    *handle = x;
    return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_stats(sqlite3_stmt *st, int first, const struct doc_history_stats *t)
{
    sqlite3_bind_int64(st, first, t->n);
    bind_real(st, first + 1, t->median_ns);
    bind_real(st, first + 2, t->ci_low_ns);
    bind_real(st, first + 3, t->ci_high_ns);
    bind_real(st, first + 4, t->ci_level);
    bind_real(st, first + 5, t->mad_ns);
}

/* Runs a prepared statement that returns no rows, then resets it for the next use. */
static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int prepare(struct sqlite_index *x, const char *sql, sqlite3_stmt **st, char *err,
                   size_t errlen)
{
    if (sqlite3_prepare_v2(x->db, sql, -1, st, NULL) != SQLITE_OK) {
        db_error(x->db, x->path, "cannot prepare a query", err, errlen);
        return -1;
    }
    return 0;
}

static int delete_rows(sqlite3_stmt *del_stages, sqlite3_stmt *del_result, const char *id)
{
    sqlite3_bind_text(del_stages, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(del_result, 1, id, -1, SQLITE_STATIC);
    return step_done(del_stages) < 0 || step_done(del_result) < 0 ? -1 : 0;
}

static int put_one(sqlite3_stmt *ins, sqlite3_stmt *ins_stage, const struct store_entry *e)
{
    bind_text(ins, 1, e->id);
    bind_text(ins, 2, e->path);
    bind_text(ins, 3, e->label);
    bind_text(ins, 4, e->command ? e->command : "");
    bind_text(ins, 5, e->host);
    bind_text(ins, 6, e->mlbench_commit);
    bind_text(ins, 7, e->workdir_commit);
    bind_text(ins, 8, e->created ? e->created : "");
    bind_text(ins, 9, e->status ? e->status : "unknown");
    sqlite3_bind_int64(ins, 10, e->runs_measured);
    sqlite3_bind_int64(ins, 11, e->runs_ok);
    bind_stats(ins, 12, &e->wall);
    sqlite3_bind_int64(ins, 18, e->file_mtime_ns);
    sqlite3_bind_int64(ins, 19, e->file_size);
    if (step_done(ins) < 0)
        return -1;
    for (size_t k = 0; k < e->n_stages; k++) {
        const struct doc_history_stage *s = &e->stages[k];
        bind_text(ins_stage, 1, e->id);
        sqlite3_bind_int64(ins_stage, 2, (sqlite3_int64)k);
        bind_text(ins_stage, 3, s->name);
        sqlite3_bind_int(ins_stage, 4, s->depth);
        bind_stats(ins_stage, 5, &s->t);
        if (step_done(ins_stage) < 0)
            return -1;
    }
    return 0;
}

static int sqlite_put(void *handle, const struct store_entry *e, size_t n, char *err,
                      size_t errlen)
{
    struct sqlite_index *x = handle;
    sqlite3_stmt *del_stages = NULL, *del_result = NULL, *ins = NULL, *ins_stage = NULL;
    int rc = -1;
    if (prepare(x, "DELETE FROM stages WHERE result_id = ?1", &del_stages, err, errlen) < 0 ||
        prepare(x, "DELETE FROM results WHERE id = ?1", &del_result, err, errlen) < 0 ||
        prepare(x, "INSERT INTO results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)", &ins, err, errlen) < 0 ||
        prepare(x, "INSERT INTO stages VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                &ins_stage, err, errlen) < 0)
        goto out;
    /* IMMEDIATE takes the write lock now (waiting up to the busy timeout for another writer):
     * a deferred transaction that upgrades later can fail at once with SQLITE_BUSY. */
    if (exec(x, "BEGIN IMMEDIATE", err, errlen) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (delete_rows(del_stages, del_result, e[i].id) < 0 ||
            put_one(ins, ins_stage, &e[i]) < 0) {
            db_error(x->db, x->path, "cannot index a result", err, errlen);
            sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
            goto out;
        }
    if (exec(x, "COMMIT", err, errlen) < 0) {
        sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(del_stages);
    sqlite3_finalize(del_result);
    sqlite3_finalize(ins);
    sqlite3_finalize(ins_stage);
    return rc;
}

static char *column_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? xstrdup((const char *)s) : NULL;
}

static double column_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static void column_stats(sqlite3_stmt *st, int first, struct doc_history_stats *t)
{
    t->n = (long)sqlite3_column_int64(st, first);
    t->median_ns = column_real(st, first + 1);
    t->ci_low_ns = column_real(st, first + 2);
    t->ci_high_ns = column_real(st, first + 3);
    t->ci_level = column_real(st, first + 4);
    t->mad_ns = column_real(st, first + 5);
}

static int read_stages(sqlite3_stmt *st, struct store_entry *e)
{
    size_t cap = 0;
    sqlite3_bind_text(st, 1, e->id, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        e->stages = xgrow(e->stages, &cap, e->n_stages + 1, sizeof *e->stages);
        struct doc_history_stage *s = &e->stages[e->n_stages++];
        s->name = column_text(st, 0);
        if (!s->name)
            s->name = xstrdup("");
        s->depth = sqlite3_column_int(st, 1);
        column_stats(st, 2, &s->t);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int sqlite_list(void *handle, const struct store_query *q, struct store_entry **out,
                       size_t *n_out, char *err, size_t errlen)
{
    struct sqlite_index *x = handle;
    sqlite3_stmt *st = NULL, *stages = NULL;
    struct store_entry *e = NULL;
    size_t n = 0, cap = 0;
    int rc;
    *out = NULL;
    *n_out = 0;
    /* Newest first so LIMIT keeps the newest; reversed below. substr rather than LIKE so a
     * prefix with % or _ means itself. */
    if (prepare(x, "SELECT id, path, label, command, host, mlbench_commit, workdir_commit,"
                " created, status, runs_measured, runs_ok, wall_n, wall_median_ns,"
                " wall_ci_low_ns, wall_ci_high_ns, wall_ci_level, wall_mad_ns, file_mtime_ns,"
                " file_size FROM results"
                " WHERE (?1 IS NULL OR id = ?1)"
                " AND (?2 IS NULL OR substr(id, 1, length(?2)) = ?2)"
                " AND (?3 IS NULL OR label = ?3) AND (?6 IS NULL OR host = ?6)"
                " AND (?5 IS NULL OR EXISTS (SELECT 1 FROM stages"
                "  WHERE stages.result_id = results.id AND stages.name = ?5))"
                " ORDER BY created DESC, id DESC LIMIT ?4", &st, err, errlen) < 0)
        return -1;
    if (q->with_stages &&
        prepare(x, "SELECT name, depth, n, median_ns, ci_low_ns, ci_high_ns, ci_level, mad_ns"
                " FROM stages WHERE result_id = ?1 ORDER BY position", &stages, err, errlen) < 0) {
        sqlite3_finalize(st);
        return -1;
    }
    bind_text(st, 1, q->id);
    bind_text(st, 2, q->id_prefix);
    bind_text(st, 3, q->label);
    sqlite3_bind_int64(st, 4, q->last ? (sqlite3_int64)q->last : -1);
    bind_text(st, 5, q->stage);
    bind_text(st, 6, q->host);
    /* One read transaction: the results and their stages are one snapshot. */
    if (exec(x, "BEGIN", err, errlen) < 0)
        goto fail;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        e = xgrow(e, &cap, n + 1, sizeof *e);
        struct store_entry *r = &e[n++];
        memset(r, 0, sizeof *r);
        r->id = column_text(st, 0);
        r->path = column_text(st, 1);
        r->label = column_text(st, 2);
        r->command = column_text(st, 3);
        r->host = column_text(st, 4);
        r->mlbench_commit = column_text(st, 5);
        r->workdir_commit = column_text(st, 6);
        r->created = column_text(st, 7);
        r->status = column_text(st, 8);
        /* an index written by an older mlbench may hold any count: kept in range here too */
        sqlite3_int64 measured = sqlite3_column_int64(st, 9), ok = sqlite3_column_int64(st, 10);
        r->runs_measured = measured >= 0 && measured <= 1000000000 ? (long)measured : 0;
        r->runs_ok = ok >= 0 && ok <= r->runs_measured ? (long)ok : 0;
        column_stats(st, 11, &r->wall);
        r->file_mtime_ns = (int64_t)sqlite3_column_int64(st, 17);
        r->file_size = (int64_t)sqlite3_column_int64(st, 18);
        if (!r->id || !r->path) {
            snprintf(err, errlen, "%s: a row without id or path: the index is damaged; delete "
                     "it to rebuild it from the result files", x->path);
            goto fail_tx;
        }
        if (stages && read_stages(stages, r) < 0)
            break;
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        db_error(x->db, x->path, "cannot read the store index", err, errlen);
        goto fail_tx;
    }
    if (stages && rc == SQLITE_ROW) { /* read_stages failed */
        db_error(x->db, x->path, "cannot read the stages of a result", err, errlen);
        goto fail_tx;
    }
    sqlite3_exec(x->db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(st);
    sqlite3_finalize(stages);
    for (size_t i = 0; i < n / 2; i++) {
        struct store_entry t = e[i];
        e[i] = e[n - 1 - i];
        e[n - 1 - i] = t;
    }
    *out = e;
    *n_out = n;
    return 0;
fail_tx:
    sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
fail:
    sqlite3_finalize(st);
    sqlite3_finalize(stages);
    store_entries_free(e, n);
    return -1;
}

static int sqlite_remove(void *handle, const char *const *ids, size_t n,
                         int (*inside)(void *arg, char *err, size_t errlen), void *arg, char *err,
                         size_t errlen)
{
    struct sqlite_index *x = handle;
    sqlite3_stmt *del_stages = NULL, *del_result = NULL;
    int rc = -1;
    /* Removing a file while results.db keeps its row would leave the index naming a file that
     * is gone: nothing is removed. */
    if (x->in_memory) {
        snprintf(err, errlen, "%s: the store index cannot be written (read-only, or the file "
                 "could not be opened for writing): nothing removed", x->path);
        return -1;
    }
    if (prepare(x, "DELETE FROM stages WHERE result_id = ?1", &del_stages, err, errlen) < 0 ||
        prepare(x, "DELETE FROM results WHERE id = ?1", &del_result, err, errlen) < 0 ||
        exec(x, "BEGIN IMMEDIATE", err, errlen) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (delete_rows(del_stages, del_result, ids[i]) < 0) {
            db_error(x->db, x->path, "cannot remove a result from the index", err, errlen);
            goto rollback;
        }
    if (inside && inside(arg, err, errlen) != 0)
        goto rollback;
    if (exec(x, "COMMIT", err, errlen) < 0)
        goto rollback;
    rc = 0;
    goto out;
rollback:
    sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_finalize(del_stages);
    sqlite3_finalize(del_result);
    return rc;
}

const struct store_ops store_sqlite_ops = {
    .name = "sqlite",
    .open = sqlite_open,
    .close = sqlite_close,
    .put = sqlite_put,
    .list = sqlite_list,
    .remove = sqlite_remove,
};
