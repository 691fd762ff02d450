/* postgres: the shared backend of the result store, a PostgreSQL database through libpq, for a
 * team whose hosts keep one history. Unlike SQLite (an index of the result files), the database
 * is the truth: each result is kept whole (JSONB) with the columns history and compare read,
 * written in one transaction with its stages. A version table carries the schema version and
 * migrations bring an older database up under an advisory lock (several hosts may start at
 * once); a newer one, or tables that are not ours, are refused untouched. Credentials come only
 * through libpq's own files and peer authentication: a password in the connection string is
 * refused, and messages name nothing of it but host and database. docs/store.md. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "store/store_ops.h"

#define PG_SCHEMA_VERSION 1             /* mlbench_schema.version of the tables below */
#define PG_LOCK_KEY 0x6d6c627300000001LL /* pg_advisory_xact_lock: "mlbs" + 1, migrations */
#define PG_CONNECT_TIMEOUT "10"         /* seconds, unless the connection string says */

/* Migration k brings a database of version k to version k + 1 (0: an empty database). Each
 * runs in the transaction that holds the advisory lock and sets the version. */
static const char *const migrations[PG_SCHEMA_VERSION] = {
    "CREATE TABLE mlbench_schema (version integer NOT NULL);"
    "INSERT INTO mlbench_schema VALUES (0);"
    "CREATE TABLE mlbench_results ("
    " id text PRIMARY KEY, label text, command text NOT NULL, host text, mlbench_commit text,"
    " workdir_commit text, created text NOT NULL, status text NOT NULL, runs_measured bigint,"
    " runs_ok bigint, wall_n bigint, wall_median_ns double precision,"
    " wall_ci_low_ns double precision, wall_ci_high_ns double precision,"
    " wall_ci_level double precision, wall_mad_ns double precision,"
    " stored timestamptz NOT NULL DEFAULT now(), document jsonb NOT NULL);"
    "CREATE INDEX mlbench_results_created ON mlbench_results (created, id);"
    "CREATE INDEX mlbench_results_label ON mlbench_results (label, created);"
    "CREATE INDEX mlbench_results_host ON mlbench_results (host, created);"
    "CREATE TABLE mlbench_stages ("
    " result_id text NOT NULL REFERENCES mlbench_results (id) ON DELETE CASCADE,"
    " position integer NOT NULL, name text NOT NULL, depth integer NOT NULL, n bigint,"
    " median_ns double precision, ci_low_ns double precision, ci_high_ns double precision,"
    " ci_level double precision, mad_ns double precision, PRIMARY KEY (result_id, position));"
    "CREATE INDEX mlbench_stages_name ON mlbench_stages (name);",
};

struct pg_store {
    PGconn *conn;
    char *shown; /* "postgresql://host/db": all of the connection a message may name */
};

/* ------------------------------------------------------------------ the connection string */

/* The conninfo keywords whose values libpq's messages may repeat and a message of ours must
 * not: who connects, and how. */
static bool hidden_keyword(const char *k)
{
    return !strcmp(k, "user") || !strcmp(k, "password") || !strcmp(k, "passfile") ||
           !strcmp(k, "options") || !strcmp(k, "service") || !strcmp(k, "sslpassword") ||
           !strcmp(k, "sslkey") || !strcmp(k, "sslcert");
}

static bool has_scheme(const char *s, size_t *len)
{
    size_t i = 0;
    if (!isalpha((unsigned char)s[0]))
        return false;
    while (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')
        i++;
    *len = i;
    return !strncmp(s + i, "://", 3);
}

/* "key=value ..." as libpq's keyword/value form: a keyword, then '='. */
static bool is_keyword_form(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    const char *k = s;
    while (islower((unsigned char)*s) || *s == '_')
        s++;
    while (isspace((unsigned char)*s))
        s++;
    return s > k && *s == '=';
}

static const char *option(const PQconninfoOption *o, const char *keyword)
{
    for (; o && o->keyword; o++)
        if (!strcmp(o->keyword, keyword))
            return o->val && *o->val ? o->val : NULL;
    return NULL;
}

/* "postgresql://host:port/db", or "postgresql:///db?host=/socket/dir" for a Unix socket, from
 * what the string (or libpq's environment) says; the parts it leaves to libpq's defaults are
 * left out. Owned by the caller. */
static char *shown_of(const char *host, const char *port, const char *db)
{
    struct strbuf b = STRBUF_INIT;
    strbuf_puts(&b, "postgresql://");
    bool socket = host && host[0] == '/';
    if (host && !socket)
        strbuf_printf(&b, "%s", host);
    if (port && !socket)
        strbuf_printf(&b, ":%s", port);
    strbuf_printf(&b, "/%s", db ? db : "");
    if (socket)
        strbuf_printf(&b, "?host=%s", host);
    if (socket && port)
        strbuf_printf(&b, "&port=%s", port);
    return strbuf_take(&b);
}

int store_pg_parse(const char *where, char **shown, char *err, size_t errlen)
{
    size_t scheme = 0;
    *shown = NULL;
    if (has_scheme(where, &scheme)) {
        if (!(scheme == 10 && !strncmp(where, "postgresql", 10)) &&
            !(scheme == 8 && !strncmp(where, "postgres", 8))) {
            snprintf(err, errlen, "--store: unsupported scheme '%.*s://' (a store is a directory, "
                     "or a PostgreSQL database as postgresql://host/database or a libpq "
                     "connection string)", (int)(scheme > 32 ? 32 : scheme), where);
            return -1;
        }
    } else if (!is_keyword_form(where)) {
        return 0; /* a directory */
    }
    char *msg = NULL;
    PQconninfoOption *o = PQconninfoParse(where, &msg);
    if (!o) {
        /* libpq's message names the part it could not read, never a password */
        size_t len = msg ? strcspn(msg, "\n") : 0;
        snprintf(err, errlen, "--store: not a PostgreSQL connection string: %.*s (see "
                 "docs/store.md for the forms)", (int)len, msg ? msg : "out of memory");
        PQfreemem(msg);
        return -1;
    }
    const char *host = option(o, "host"), *db = option(o, "dbname");
    if (option(o, "password")) {
        char *s = shown_of(host, option(o, "port"), db);
        snprintf(err, errlen, "--store %s...: the connection string carries a password, which "
                 "would end up in shell history, process lists and logs; put it in a password "
                 "file instead (~/.pgpass, or the file PGPASSFILE names, mode 0600, a line "
                 "host:port:database:user:password), or use a service file (PGSERVICEFILE) or "
                 "peer authentication, and give the URI without it", s);
        free(s);
        PQconninfoFree(o);
        return -1;
    }
    if (!host)
        host = getenv("PGHOST");
    if (!db)
        db = getenv("PGDATABASE");
    *shown = shown_of(host, option(o, "port"), db);
    PQconninfoFree(o);
    return 1;
}

/* libpq's message without the values of the connection string that are not to be shown (a
 * user name, an option), first lines only, in err after "what". */
static void pg_error(const struct pg_store *x, const char *what, const char *libpq_msg,
                     char *err, size_t errlen)
{
    char *msg = xstrdup(libpq_msg && *libpq_msg ? libpq_msg : "unknown error");
    PQconninfoOption *opts = x->conn ? PQconninfo(x->conn) : NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        if (!hidden_keyword(o->keyword) || !o->val || strlen(o->val) < 2)
            continue;
        char *at;
        while ((at = strstr(msg, o->val))) {
            char *rest = xstrdup(at + strlen(o->val));
            *at = '\0';
            char *next = xasprintf("%s***%s", msg, rest);
            free(rest);
            free(msg);
            msg = next;
        }
    }
    PQconninfoFree(opts);
    /* one line: libpq ends with "\n", and adds DETAIL/HINT lines */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t len = strlen(msg);
    while (len && msg[len - 1] == ' ')
        msg[--len] = '\0';
    snprintf(err, errlen, "the shared store %s: %s: %s", x->shown, what, msg);
    free(msg);
}

/* ------------------------------------------------------------------ statements */

/* Runs sql with text parameters; returns the result when its status is want, else NULL with
 * err (the result cleared). */
static PGresult *run(struct pg_store *x, const char *what, ExecStatusType want, const char *sql,
                     int n, const char *const *params, char *err, size_t errlen)
{
    PGresult *r = PQexecParams(x->conn, sql, n, NULL, params, NULL, NULL, 0);
    if (r && PQresultStatus(r) == want)
        return r;
    pg_error(x, what, r ? PQresultErrorMessage(r) : PQerrorMessage(x->conn), err, errlen);
    PQclear(r);
    return NULL;
}

/* Runs sql without parameters: it may be several statements (a migration). */
static int command(struct pg_store *x, const char *what, const char *sql, char *err,
                   size_t errlen)
{
    PGresult *r = PQexec(x->conn, sql);
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        pg_error(x, what, r ? PQresultErrorMessage(r) : PQerrorMessage(x->conn), err, errlen);
    PQclear(r);
    return ok ? 0 : -1;
}

static void rollback(struct pg_store *x)
{
    PQclear(PQexec(x->conn, "ROLLBACK"));
}

/* The schema version of the database: 0 when it has no mlbench tables; -1 with err when it
 * cannot be read, STORE_REFUSED when mlbench's tables are there without one version (not ours,
 * or damaged). */
static long schema_version(struct pg_store *x, char *err, size_t errlen)
{
    PGresult *r = run(x, "cannot read the schema version", PGRES_TUPLES_OK,
                      "SELECT to_regclass('mlbench_schema') IS NOT NULL,"
                      " to_regclass('mlbench_results') IS NOT NULL", 0, NULL, err, errlen);
    if (!r)
        return -1;
    bool versioned = PQgetvalue(r, 0, 0)[0] == 't', results = PQgetvalue(r, 0, 1)[0] == 't';
    PQclear(r);
    if (!versioned && results) {
        snprintf(err, errlen, "the shared store %s is not an mlbench store: it has a table "
                 "mlbench_results but no mlbench_schema; use another database", x->shown);
        return STORE_REFUSED;
    }
    if (!versioned)
        return 0;
    r = run(x, "cannot read the schema version", PGRES_TUPLES_OK,
            "SELECT max(version), count(*) FROM mlbench_schema", 0, NULL, err, errlen);
    if (!r)
        return -1;
    long v = PQgetisnull(r, 0, 0) ? -1 : strtol(PQgetvalue(r, 0, 0), NULL, 10);
    long rows = strtol(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
    if (v < 0 || rows != 1) {
        snprintf(err, errlen, "the shared store %s is not an mlbench store: its table "
                 "mlbench_schema holds %ld rows, not one version", x->shown, rows);
        return STORE_REFUSED;
    }
    return v;
}

/* Brings the schema to PG_SCHEMA_VERSION, under the advisory lock so hosts starting at once
 * take turns; refuses a newer one untouched. */
static int migrate(struct pg_store *x, bool *fresh, char *err, size_t errlen)
{
    long v = schema_version(x, err, errlen);
    if (v == PG_SCHEMA_VERSION)
        return 0;
    if (v > PG_SCHEMA_VERSION) {
        snprintf(err, errlen, "the shared store %s is an mlbench store of version %ld, newer "
                 "than this mlbench reads (%d): use a newer mlbench, or another store", x->shown,
                 v, PG_SCHEMA_VERSION);
        return STORE_REFUSED;
    }
    if (v < 0)
        return (int)v;
    /* A session lock, taken before the transaction: a transaction that waited for a lock on
     * no relation would go on reading the catalog as it was before the other host's commit. */
    char lock[96], unlock[96];
    snprintf(lock, sizeof lock, "SELECT pg_advisory_lock(%lld)", PG_LOCK_KEY);
    snprintf(unlock, sizeof unlock, "SELECT pg_advisory_unlock(%lld)", PG_LOCK_KEY);
    PGresult *r = run(x, "cannot take the migration lock", PGRES_TUPLES_OK, lock, 0, NULL, err,
                      errlen);
    if (!r)
        return -1;
    PQclear(r);
    if (command(x, "cannot start a transaction", "BEGIN", err, errlen) < 0)
        goto unlock;
    if ((v = schema_version(x, err, errlen)) < 0) /* again: another host may have done it */
        goto fail;
    if (v > PG_SCHEMA_VERSION) {
        rollback(x);
        PQclear(PQexec(x->conn, unlock));
        return migrate(x, fresh, err, errlen); /* refused, with its message */
    }
    for (; v < PG_SCHEMA_VERSION; v++) {
        char set[64];
        snprintf(set, sizeof set, "UPDATE mlbench_schema SET version = %ld", v + 1);
        if (command(x, "cannot create or migrate the tables", migrations[v], err, errlen) < 0 ||
            command(x, "cannot set the schema version", set, err, errlen) < 0)
            goto fail;
    }
    if (command(x, "cannot commit the migration", "COMMIT", err, errlen) < 0)
        goto fail;
    PQclear(PQexec(x->conn, unlock));
    *fresh = true;
    return 0;
fail:
    rollback(x);
unlock:
    PQclear(PQexec(x->conn, unlock));
    return v < 0 ? (int)v : -1;
}

/* libpq's notices ("relation exists, skipping") are not the user's business. */
static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static void pg_close(void *handle)
{
    struct pg_store *x = handle;
    if (!x)
        return;
    PQfinish(x->conn);
    free(x->shown);
    free(x);
}

static int pg_open(const char *where, void **handle, bool *fresh, char *err, size_t errlen)
{
    *handle = NULL;
    *fresh = false;
    struct pg_store *x = xcalloc(1, sizeof *x);
    if (store_pg_parse(where, &x->shown, err, errlen) != 1) {
        pg_close(x);
        return STORE_REFUSED;
    }
    /* Defaults first: the expanded connection string (dbname) overrides them. */
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {PG_CONNECT_TIMEOUT, "mlbench", where, NULL};
    x->conn = PQconnectdbParams(keys, vals, 1);
    if (!x->conn || PQstatus(x->conn) != CONNECTION_OK) {
        pg_error(x, "cannot connect", x->conn ? PQerrorMessage(x->conn) : "out of memory", err,
                 errlen);
        pg_close(x);
        return STORE_UNREACHABLE;
    }
    free(x->shown); /* what libpq connected to, with its defaults filled in */
    const char *host = PQhost(x->conn);
    const char *port = PQport(x->conn);
    x->shown = shown_of(host && *host ? host : NULL,
                        port && *port && strcmp(port, "5432") != 0 ? port : NULL, PQdb(x->conn));
    PQsetNoticeProcessor(x->conn, quiet, NULL);
    int rc = migrate(x, fresh, err, errlen);
    if (rc < 0) {
        pg_close(x);
        return rc;
    }
    *handle = x;
    return 0;
}

/* ------------------------------------------------------------------ rows */

/* A figure as a parameter: NULL for NAN (no such figure). buf holds the text. */
static const char *real_param(double v, char buf[32])
{
    if (!isfinite(v))
        return NULL;
    snprintf(buf, 32, "%.17g", v);
    return buf;
}

static int put_one(struct pg_store *x, const struct store_entry *e, bool *added, char *err,
                   size_t errlen)
{
    char num[9][32];
    snprintf(num[0], 32, "%ld", e->runs_measured);
    snprintf(num[1], 32, "%ld", e->runs_ok);
    snprintf(num[2], 32, "%ld", e->wall.n);
    char *doc = json_dumps(e->doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!doc) {
        snprintf(err, errlen, "result %s: cannot write its JSON", e->id);
        return -1;
    }
    const char *p[] = {e->id, e->label, e->command, e->host, e->mlbench_commit, e->workdir_commit,
                       e->created ? e->created : "", e->status ? e->status : "", num[0], num[1],
                       num[2], real_param(e->wall.median_ns, num[3]),
                       real_param(e->wall.ci_low_ns, num[4]),
                       real_param(e->wall.ci_high_ns, num[5]),
                       real_param(e->wall.ci_level, num[6]), real_param(e->wall.mad_ns, num[7]),
                       doc};
    /* The same id twice is one result (store push sends a result again): the first stays. */
    PGresult *r = run(x, "cannot store the result", PGRES_TUPLES_OK,
                      "INSERT INTO mlbench_results (id, label, command, host, mlbench_commit,"
                      " workdir_commit, created, status, runs_measured, runs_ok, wall_n,"
                      " wall_median_ns, wall_ci_low_ns, wall_ci_high_ns, wall_ci_level,"
                      " wall_mad_ns, document) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
                      " $11, $12, $13, $14, $15, $16, $17::jsonb)"
                      " ON CONFLICT (id) DO NOTHING RETURNING id", 17, p, err, errlen);
    free(doc);
    if (!r)
        return -1;
    *added = PQntuples(r) == 1;
    PQclear(r);
    for (size_t k = 0; *added && k < e->n_stages; k++) {
        const struct doc_history_stage *s = &e->stages[k];
        char pos[24], depth[24], n[24], v[5][32];
        snprintf(pos, sizeof pos, "%zu", k);
        snprintf(depth, sizeof depth, "%d", s->depth);
        snprintf(n, sizeof n, "%ld", s->t.n);
        const char *sp[] = {e->id, pos, s->name, depth, n, real_param(s->t.median_ns, v[0]),
                            real_param(s->t.ci_low_ns, v[1]), real_param(s->t.ci_high_ns, v[2]),
                            real_param(s->t.ci_level, v[3]), real_param(s->t.mad_ns, v[4])};
        PGresult *rs = run(x, "cannot store the stages of the result", PGRES_COMMAND_OK,
                           "INSERT INTO mlbench_stages VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
                           " $9, $10)", 10, sp, err, errlen);
        if (!rs)
            return -1;
        PQclear(rs);
    }
    return 0;
}

static int pg_put(void *handle, const struct store_entry *e, size_t n, char *err, size_t errlen)
{
    struct pg_store *x = handle;
    int added = 0;
    for (size_t i = 0; i < n; i++) {
        if (!e[i].doc) {
            snprintf(err, errlen, "result %s: no document to store", e[i].id);
            return -1;
        }
        bool new_row = false;
        /* one transaction per result: its row and its stages, or nothing */
        if (command(x, "cannot start a transaction", "BEGIN", err, errlen) < 0)
            return -1;
        if (put_one(x, &e[i], &new_row, err, errlen) < 0 ||
            command(x, "cannot commit the result", "COMMIT", err, errlen) < 0) {
            rollback(x);
            return -1;
        }
        added += new_row;
    }
    return added;
}

static char *value(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : xstrdup(PQgetvalue(r, row, col));
}

static double real_value(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NAN : strtod(PQgetvalue(r, row, col), NULL);
}

static long count_value(const PGresult *r, int row, int col, long max)
{
    long v = PQgetisnull(r, row, col) ? 0 : strtol(PQgetvalue(r, row, col), NULL, 10);
    return v >= 0 && v <= max ? v : 0;
}

static void stats_value(const PGresult *r, int row, int first, struct doc_history_stats *t)
{
    t->n = count_value(r, row, first, 1000000000L);
    t->median_ns = real_value(r, row, first + 1);
    t->ci_low_ns = real_value(r, row, first + 2);
    t->ci_high_ns = real_value(r, row, first + 3);
    t->ci_level = real_value(r, row, first + 4);
    t->mad_ns = real_value(r, row, first + 5);
}

/* The matching results, newest first (so that LIMIT keeps the newest), in byte order as
 * SQLite sorts (a database's collation may order ISO times and ids otherwise). */
#define SELECTED                                                                              \
    "SELECT id, label, command, host, mlbench_commit, workdir_commit, created, status,"      \
    " runs_measured, runs_ok, wall_n, wall_median_ns, wall_ci_low_ns, wall_ci_high_ns,"     \
    " wall_ci_level, wall_mad_ns FROM mlbench_results r"                                     \
    " WHERE ($1::text IS NULL OR id = $1) AND ($2::text IS NULL OR starts_with(id, $2))"    \
    " AND ($3::text IS NULL OR label = $3) AND ($6::text IS NULL OR host = $6)"              \
    " AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM mlbench_stages s"                       \
    "  WHERE s.result_id = r.id AND s.name = $5))"                                           \
    " ORDER BY created COLLATE \"C\" DESC, id COLLATE \"C\" DESC LIMIT $4::bigint"

/* The stage rows, in the entries' order (created, id; then position), onto e[0..n). */
static void read_stages(const PGresult *r, struct store_entry *e, size_t n)
{
    size_t i = 0;
    for (int row = 0, rows = PQntuples(r); row < rows; row++) {
        const char *id = PQgetvalue(r, row, 0);
        while (i < n && strcmp(e[i].id, id) != 0)
            i++;
        if (i == n)
            return; /* cannot happen: one snapshot, one order */
        struct store_entry *to = &e[i];
        to->stages = xreallocarray(to->stages, to->n_stages + 1, sizeof *to->stages);
        struct doc_history_stage *s = &to->stages[to->n_stages++];
        s->name = xstrdup(PQgetvalue(r, row, 1));
        s->depth = (int)count_value(r, row, 2, 1000);
        stats_value(r, row, 3, &s->t);
    }
}

static int pg_list(void *handle, const struct store_query *q, struct store_entry **out,
                   size_t *n_out, char *err, size_t errlen)
{
    struct pg_store *x = handle;
    *out = NULL;
    *n_out = 0;
    char last[24];
    snprintf(last, sizeof last, "%zu", q->last);
    const char *p[] = {q->id, q->id_prefix, q->label, q->last ? last : NULL, q->stage, q->host};
    /* one snapshot for the results and their stages */
    if (command(x, "cannot start a transaction",
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err, errlen) < 0)
        return -1;
    PGresult *r = run(x, "cannot list the results", PGRES_TUPLES_OK, SELECTED, 6, p, err, errlen);
    PGresult *st = NULL;
    if (r && q->with_stages)
        st = run(x, "cannot list the stages", PGRES_TUPLES_OK,
                 "WITH sel AS (" SELECTED ") SELECT s.result_id, s.name, s.depth, s.n,"
                 " s.median_ns, s.ci_low_ns, s.ci_high_ns, s.ci_level, s.mad_ns"
                 " FROM mlbench_stages s JOIN sel ON s.result_id = sel.id"
                 " ORDER BY sel.created COLLATE \"C\", sel.id COLLATE \"C\", s.position", 6, p,
                 err, errlen);
    if (!r || (q->with_stages && !st)) {
        PQclear(r);
        rollback(x);
        return -1;
    }
    PQclear(PQexec(x->conn, "COMMIT"));
    size_t n = (size_t)PQntuples(r);
    struct store_entry *e = xcalloc(n + 1, sizeof *e);
    for (size_t i = 0; i < n; i++) {
        int row = (int)(n - 1 - i); /* oldest first */
        struct store_entry *to = &e[i];
        to->id = value(r, row, 0);
        to->label = value(r, row, 1);
        to->command = value(r, row, 2);
        to->host = value(r, row, 3);
        to->mlbench_commit = value(r, row, 4);
        to->workdir_commit = value(r, row, 5);
        to->created = value(r, row, 6);
        to->status = value(r, row, 7);
        to->runs_measured = count_value(r, row, 8, 1000000000L);
        to->runs_ok = count_value(r, row, 9, to->runs_measured);
        stats_value(r, row, 10, &to->wall);
        to->file_mtime_ns = to->file_size = -1;
    }
    if (st)
        read_stages(st, e, n);
    PQclear(r);
    PQclear(st);
    *out = e;
    *n_out = n;
    return 0;
}

static int pg_remove(void *handle, const char *const *ids, size_t n,
                     int (*inside)(void *arg, char *err, size_t errlen), void *arg, char *err,
                     size_t errlen)
{
    struct pg_store *x = handle;
    if (command(x, "cannot start a transaction", "BEGIN", err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        PGresult *r = run(x, "cannot remove a result", PGRES_COMMAND_OK,
                          "DELETE FROM mlbench_results WHERE id = $1", 1, &ids[i], err, errlen);
        if (!r) {
            rollback(x);
            return -1;
        }
        PQclear(r);
    }
    if ((inside && inside(arg, err, errlen) != 0) ||
        command(x, "cannot commit the removal", "COMMIT", err, errlen) < 0) {
        rollback(x);
        return -1;
    }
    return 0;
}

static int pg_get(void *handle, const char *id, json_t **doc, char *err, size_t errlen)
{
    struct pg_store *x = handle;
    *doc = NULL;
    PGresult *r = run(x, "cannot read the result", PGRES_TUPLES_OK,
                      "SELECT document::text FROM mlbench_results WHERE id = $1", 1, &id, err,
                      errlen);
    if (!r)
        return -1;
    if (PQntuples(r) != 1) {
        PQclear(r);
        snprintf(err, errlen, "unknown run '%s' (see mlbench history)", id);
        return STORE_REFUSED;
    }
    json_error_t je;
    *doc = json_loads(PQgetvalue(r, 0, 0), JSON_DECODE_ANY, &je);
    PQclear(r);
    if (!json_is_object(*doc)) {
        json_decref(*doc);
        *doc = NULL;
        snprintf(err, errlen, "the shared store %s: result %s: its document is not a JSON "
                 "object (%s)", x->shown, id, je.text);
        return -1;
    }
    return 0;
}

static const char *pg_shown(void *handle)
{
    return ((struct pg_store *)handle)->shown;
}

const struct store_ops store_postgres_ops = {
    .name = "postgresql",
    .open = pg_open,
    .close = pg_close,
    .put = pg_put,
    .list = pg_list,
    .remove = pg_remove,
    .get = pg_get,
    .shown = pg_shown,
};
