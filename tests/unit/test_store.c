/* Unit tests of src/store (store.c with the SQLite backend, sqlite.c): results round-trip
 * through the index, references resolve (id, prefix, label, latest, path) or fail with the
 * documented messages, two processes writing at once both land, an index of an older version is
 * rebuilt, one of a newer version or a file that is not ours is refused untouched, and a missing
 * index is rebuilt from the result files. Each test works in its own temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "util/xalloc.h"
#include "store/history.h"
#include "store/store.h"

struct fixture {
    char dir[64];   /* the store */
    char runs[96];
    char db[96];
};

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mlbench-test-store-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->runs, sizeof f->runs, "%s/runs", f->dir);
    snprintf(f->db, sizeof f->db, "%s/results.db", f->dir);
    mkdir(f->runs, 0777);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

/* A minimal result document as `mlbench run` writes it: total wall median wall_ms, and a stage
 * "train" of train_ms (none when train_ms < 0). */
static json_t *make_result(const char *id, const char *label, const char *created, double wall_ms,
                           double train_ms)
{
    json_t *stages = json_array();
    if (train_ms >= 0)
        json_array_append_new(
            stages, json_pack("{s:s, s:i, s:i, s:{s:i, s:f, s:f, s:f, s:f, s:f}}", "name",
                              "train", "depth", 0, "n", 5, "active_ns", "n", 5, "median",
                              train_ms * 1e6, "ci_low", train_ms * 0.99e6, "ci_high",
                              train_ms * 1.01e6, "ci_level", 0.9375, "mad", train_ms * 1e4));
    return json_pack(
        "{s:s, s:s, s:o, s:s, s:{s:s, s:s}, s:{s:[s, s], s:b}, s:{s:s, s:{s:s}}, s:s, s:[],"
        " s:{s:i, s:i, s:i, s:{s:i, s:f, s:f, s:f, s:f, s:f}, s:o}}",
        "schema", "mlbench.result/1", "id", id, "label", label ? json_string(label) : json_null(),
        "created", created, "mlbench", "version", "0.1.0", "git_commit", "abc123",
        "command", "argv", "python3", "train.py", "shell", 0,
        "environment", "hostname", "box", "git", "commit", "def456", "status", "complete", "runs",
        "summary", "runs_measured", 5, "runs_ok", 5, "runs_used", 5, "wall_ns", "n", 5,
        "median", wall_ms * 1e6, "ci_low", wall_ms * 0.99e6, "ci_high", wall_ms * 1.01e6,
        "ci_level", 0.9375, "mad", wall_ms * 1e4, "stages", stages);
}

/* Writes the result into <dir>/runs/<id>.json (or into dir itself when dir is given) and,
 * when record is set, indexes it with store_record. */
static void add(const struct fixture *f, const char *dir, bool record, const char *id,
                const char *label, const char *created, double wall_ms, double train_ms)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", dir ? dir : f->runs, id);
    json_t *r = make_result(id, label, created, wall_ms, train_ms);
    assert_non_null(r);
    assert_int_equal(json_dump_file(r, path, JSON_INDENT(1)), 0);
    if (record) {
        char err[512] = "";
        if (store_record(f->dir, path, r, err, sizeof err) != 0) {
            print_error("store_record: %s\n", err);
            fail();
        }
    }
    json_decref(r);
}

static size_t count(const struct fixture *f)
{
    char err[512] = "";
    struct store *s = store_open(f->dir, err, sizeof err);
    if (!s) {
        print_error("store_open: %s\n", err);
        fail();
    }
    struct store_query q = {0};
    struct store_entry *e;
    size_t n;
    assert_int_equal(store_list(s, &q, &e, &n, err, sizeof err), 0);
    store_entries_free(e, n);
    store_close(s);
    return n;
}

/* What store_load makes of ref: the file name of the path it read (without directory), or the
 * error. */
static char *resolve(const struct fixture *f, const char *ref)
{
    char err[512] = "", *path = NULL;
    json_t *doc = store_load(f->dir, ref, &path, err, sizeof err);
    if (!doc)
        return xasprintf("error: %s", err);
    json_decref(doc);
    const char *slash = strrchr(path, '/');
    char *name = xstrdup(slash ? slash + 1 : path);
    free(path);
    return name;
}

#define assert_resolves(f, ref, want)                                                          \
    do {                                                                                       \
        char *got_ = resolve(f, ref);                                                          \
        assert_string_equal(got_, want);                                                       \
        free(got_);                                                                            \
    } while (0)

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = xcalloc((size_t)n + 1, 1);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

static void sql(const char *db_path, const char *statements)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, statements, NULL, NULL, &msg) != SQLITE_OK) {
        print_error("%s: %s\n", statements, msg);
        fail();
    }
    sqlite3_close(db);
}

static long long sql_int(const char *db_path, const char *query)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, query, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* ------------------------------------------------------------------ tests */

static void test_round_trip(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T090000-bbbbbb", NULL, "2026-12-01T09:00:00.000Z", 80, -1);
    char err[512];
    struct store *s = store_open(f->dir, err, sizeof err);
    assert_non_null(s);
    struct store_query q = {.with_stages = true};
    struct store_entry *e;
    size_t n;
    assert_int_equal(store_list(s, &q, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    /* oldest first, whatever the order of recording */
    assert_string_equal(e[0].id, "20261201T090000-bbbbbb");
    assert_null(e[0].label);
    assert_int_equal(e[0].n_stages, 0);
    const struct store_entry *b = &e[1];
    assert_string_equal(b->id, "20261201T100000-aaaaaa");
    assert_string_equal(b->label, "base");
    assert_string_equal(b->command, "python3 train.py");
    assert_string_equal(b->host, "box");
    assert_string_equal(b->mlbench_commit, "abc123");
    assert_string_equal(b->workdir_commit, "def456");
    assert_string_equal(b->created, "2026-12-01T10:00:00.000Z");
    assert_string_equal(b->status, "complete");
    assert_int_equal(b->runs_measured, 5);
    assert_int_equal(b->runs_ok, 5);
    assert_int_equal(b->wall.n, 5);
    assert_true(fabs(b->wall.median_ns - 150e6) < 1e-3);
    assert_true(fabs(b->wall.ci_level - 0.9375) < 1e-12);
    assert_int_equal(b->n_stages, 1);
    assert_string_equal(b->stages[0].name, "train");
    assert_true(fabs(b->stages[0].t.median_ns - 100e6) < 1e-3);
    assert_true(fabs(b->stages[0].t.ci_high_ns - 101e6) < 1e-3);
    char want[256];
    snprintf(want, sizeof want, "%s/runs/20261201T100000-aaaaaa.json", f->dir);
    assert_string_equal(b->path, want);
    store_entries_free(e, n);

    /* filters: label, stage, last */
    struct store_query by_label = {.label = "base"}, by_stage = {.stage = "train"},
                       last = {.last = 1};
    assert_int_equal(store_list(s, &by_label, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    store_entries_free(e, n);
    assert_int_equal(store_list(s, &by_stage, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    store_entries_free(e, n);
    assert_int_equal(store_list(s, &last, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(e[0].id, "20261201T100000-aaaaaa");
    store_entries_free(e, n);

    /* store_record can read the file itself */
    store_close(s);
    char other[256];
    snprintf(other, sizeof other, "%s/20261201T080000-cccccc.json", f->runs);
    json_t *r = make_result("20261201T080000-cccccc", NULL, "2026-12-01T08:00:00.000Z", 10, -1);
    assert_int_equal(json_dump_file(r, other, 0), 0);
    json_decref(r);
    assert_int_equal(store_record(f->dir, other, NULL, err, sizeof err), 0);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM results WHERE id LIKE '%cccccc'"), 1);
    unlink(other);
    s = store_open(f->dir, err, sizeof err); /* and the row goes with the file */
    assert_non_null(s);

    /* recording the same id again replaces it */
    store_close(s);
    add(f, NULL, true, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 90);
    s = store_open(f->dir, err, sizeof err);
    assert_int_equal(store_list(s, &q, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_true(fabs(e[1].stages[0].t.median_ns - 90e6) < 1e-3);
    store_entries_free(e, n);
    store_close(s);
}

static void test_resolve(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-a1b2c3", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T110000-a1ffff", "base", "2026-12-01T11:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T120000-c0ffee", "cand", "2026-12-01T12:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T090000-dddddd", NULL, "2026-12-01T09:00:00.000Z", 150, 100);

    assert_resolves(f, "20261201T100000-a1b2c3", "20261201T100000-a1b2c3.json");
    assert_resolves(f, "20261201T12", "20261201T120000-c0ffee.json");
    assert_resolves(f, "base", "20261201T110000-a1ffff.json"); /* the newest with the label */
    assert_resolves(f, "cand", "20261201T120000-c0ffee.json");
    assert_resolves(f, "latest", "20261201T120000-c0ffee.json");
    assert_resolves(f, "latest~0", "20261201T120000-c0ffee.json");
    assert_resolves(f, "latest~1", "20261201T110000-a1ffff.json");
    assert_resolves(f, "latest~3", "20261201T090000-dddddd.json");
    char *beyond = resolve(f, "latest~4"); /* 4 results: latest~3 is the oldest */
    assert_non_null(strstr(beyond, "error: 'latest~4': the store"));
    assert_non_null(strstr(beyond, "holds 4 results"));
    free(beyond);
    char *bad = resolve(f, "latest~1x");
    assert_non_null(strstr(bad, "give latest~N"));
    free(bad);
    /* a path is read as it is, the store not asked */
    assert_resolves(f, "some/where.json", "error: some/where.json: unable to open "
                    "some/where.json: No such file or directory");
    assert_resolves(f, "nothing", "error: unknown run 'nothing' (see mlbench history)");
    assert_resolves(f, "20261201T1", "error: ambiguous prefix '20261201T1' matches "
                    "20261201T100000-a1b2c3, 20261201T110000-a1ffff and 1 more");
    assert_resolves(f, "2026120", "error: ambiguous prefix '2026120' matches "
                    "20261201T090000-dddddd, 20261201T100000-a1b2c3 and 2 more");
    assert_resolves(f, "20261201T11", "20261201T110000-a1ffff.json");
    /* a prefix with SQL wildcards means itself */
    assert_resolves(f, "2026%", "error: unknown run '2026%' (see mlbench history)");
    assert_resolves(f, "", "error: an empty reference: give an id, a label, latest or a file");
}

static void test_ambiguous_two(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-a1b2c3", NULL, "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T100000-a1ffff", NULL, "2026-12-01T10:00:00.500Z", 150, 100);
    assert_resolves(f, "20261201T100000-a1", "error: ambiguous prefix '20261201T100000-a1' "
                    "matches 20261201T100000-a1b2c3 and 20261201T100000-a1ffff");
}

static void test_empty_and_missing(void **state)
{
    struct fixture *f = *state;
    char want[256];
    snprintf(want, sizeof want, "error: no results in the store '%s' yet (mlbench run records "
             "them)", f->dir);
    assert_resolves(f, "latest", want);
    char err[512], *path = NULL, missing[128];
    snprintf(missing, sizeof missing, "%s/nope", f->dir);
    assert_null(store_load(missing, "latest", &path, err, sizeof err));
    assert_non_null(strstr(err, "no result store at"));
    assert_int_equal(access(missing, F_OK), -1); /* not created */
}

/* Two processes each record 50 results at the same moment, the index not even created yet:
 * all 100 land. The files are outside runs/ so that only store_record can index them. */
static void test_concurrent_writers(void **state)
{
    struct fixture *f = *state;
    char files[128];
    snprintf(files, sizeof files, "%s/elsewhere", f->dir);
    mkdir(files, 0777);
    pid_t pid[2];
    for (int w = 0; w < 2; w++) {
        pid[w] = fork();
        assert_true(pid[w] >= 0);
        if (pid[w] == 0) {
            for (int i = 0; i < 50; i++) {
                char id[64], created[64], path[256], err[512];
                snprintf(id, sizeof id, "20261201T1000%02d-%d%05d", i, w, i);
                snprintf(created, sizeof created, "2026-12-01T10:00:%02d.%03dZ", i, w);
                snprintf(path, sizeof path, "%s/%s.json", files, id);
                json_t *r = make_result(id, w ? "w1" : "w0", created, 100 + i, 50);
                if (json_dump_file(r, path, 0) != 0 ||
                    store_record(f->dir, path, r, err, sizeof err) != 0) {
                    fprintf(stderr, "writer %d: %s\n", w, err);
                    _exit(1);
                }
                json_decref(r);
            }
            _exit(0);
        }
    }
    for (int w = 0; w < 2; w++) {
        int status;
        assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(count(f), 100);
    char err[512];
    assert_int_equal(store_check(f->dir, err, sizeof err), 0);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM stages"), 100);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM results WHERE label = 'w1'"), 50);
}

/* A missing index is rebuilt from the files; so is one deleted later; an unreadable file is
 * left out but still found by its id. */
static void test_rebuild(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, false, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, false, "20261201T110000-bbbbbb", "base", "2026-12-01T11:00:00.000Z", 160, 110);
    char bad[256];
    snprintf(bad, sizeof bad, "%s/20261201T120000-cccccc.json", f->runs);
    FILE *fp = fopen(bad, "w");
    assert_non_null(fp);
    fputs("{\"schema\": \"mlbench.result/1\", \"id\": ", fp); /* truncated */
    fclose(fp);
    assert_int_equal(access(f->db, F_OK), -1);
    assert_resolves(f, "latest", "20261201T110000-bbbbbb.json");
    assert_int_equal(access(f->db, F_OK), 0);
    assert_int_equal(count(f), 2);
    /* still named by its id, so that show says what is wrong with it */
    char *got = resolve(f, "20261201T120000-cccccc");
    assert_non_null(strstr(got, "20261201T120000-cccccc.json: line 1"));
    free(got);

    unlink(f->db);
    char wal[128];
    snprintf(wal, sizeof wal, "%s-wal", f->db);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", f->db);
    unlink(wal);
    assert_int_equal(count(f), 2);

    /* a file added or removed by hand: the index follows */
    add(f, NULL, false, "20261201T130000-dddddd", NULL, "2026-12-01T13:00:00.000Z", 150, 100);
    char gone[256];
    snprintf(gone, sizeof gone, "%s/20261201T100000-aaaaaa.json", f->runs);
    unlink(gone);
    assert_int_equal(count(f), 2);
    assert_resolves(f, "latest", "20261201T130000-dddddd.json");
    /* a copy of a result under another name: left out, the original keeps its row */
    char copy[256], cmd[600];
    snprintf(copy, sizeof copy, "%s/copy.json", f->runs);
    snprintf(cmd, sizeof cmd, "cp '%s/20261201T130000-dddddd.json' '%s'", f->runs, copy);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(count(f), 2);
    assert_resolves(f, "20261201T130000-dddddd", "20261201T130000-dddddd.json");
    assert_resolves(f, "20261201T100000-aaaaaa",
                    "error: unknown run '20261201T100000-aaaaaa' (see mlbench history)");
}

/* The store refuses, untouched, a newer index, a foreign SQLite database and a file that is
 * not SQLite at all. */
static void check_refused(const struct fixture *f, const char *want)
{
    add(f, NULL, false, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    size_t len0, len1;
    char *before = slurp(f->db, &len0), err[512] = "", *path = NULL;
    assert_null(store_open(f->dir, err, sizeof err));
    assert_non_null(strstr(err, want));
    assert_int_equal(store_check(f->dir, err, sizeof err), -1);
    assert_non_null(strstr(err, want));
    assert_null(store_load(f->dir, "latest", &path, err, sizeof err));
    char one[256];
    snprintf(one, sizeof one, "%s/20261201T100000-aaaaaa.json", f->runs);
    assert_int_equal(store_record(f->dir, one, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, want));
    char *after = slurp(f->db, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    free(before);
    free(after);
}

static void test_refuse_newer(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    sql(f->db, "PRAGMA user_version = 99");
    check_refused(f, "is an mlbench store of version 99, newer than this mlbench reads (2)");
}

static void test_refuse_foreign(void **state)
{
    struct fixture *f = *state;
    sql(f->db, "CREATE TABLE photos (name TEXT); INSERT INTO photos VALUES ('cat')");
    check_refused(f, "is not an mlbench store: a SQLite database of another program");
}

static void test_refuse_not_sqlite(void **state)
{
    struct fixture *f = *state;
    FILE *fp = fopen(f->db, "w");
    assert_non_null(fp);
    for (int i = 0; i < 100; i++)
        fputs("these are not the bytes of a database\n", fp);
    fclose(fp);
    check_refused(f, "is not an mlbench store: not a SQLite database");
}

/* An index of an older version (our application id, an older user_version and table) is
 * rebuilt from the result files. */
static void test_migrate_older(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, false, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    sql(f->db, "PRAGMA application_id = 1835819635; PRAGMA user_version = 0;"
        "CREATE TABLE results (id TEXT PRIMARY KEY); INSERT INTO results VALUES ('old')");
    assert_int_equal(count(f), 1);
    assert_int_equal(sql_int(f->db, "PRAGMA user_version"), 2);
    assert_resolves(f, "base", "20261201T100000-aaaaaa.json");
    assert_resolves(f, "old", "error: unknown run 'old' (see mlbench history)");
}

/* A version-1 index (before file stamps) is rebuilt too; so is a file changed after it was
 * indexed: a truncated file leaves the index, a rewritten one is indexed again. */
static void test_changed_file(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T110000-bbbbbb", "cand", "2026-12-01T11:00:00.000Z", 150, 90);
    assert_int_equal(count(f), 2);
    char path[512];
    snprintf(path, sizeof path, "%s/20261201T110000-bbbbbb.json", f->runs);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("{\"schema\": \"mlbench.result/1\", \"id\": ", fp); /* truncated */
    fclose(fp);
    assert_int_equal(count(f), 1);
    assert_resolves(f, "cand", "error: unknown run 'cand' (see mlbench history)");
}

static void test_remove(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-aaaaaa", "base", "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T110000-bbbbbb", "base", "2026-12-01T11:00:00.000Z", 150, 100);
    char err[512], *id, path[256], outside[256];
    struct store *s = store_open(f->dir, err, sizeof err);
    assert_non_null(s);
    /* a path must be a result file of the store */
    snprintf(outside, sizeof outside, "%s/outside.json", f->dir);
    FILE *fp = fopen(outside, "w");
    fputs("{}", fp);
    fclose(fp);
    assert_int_equal(store_find_stored(s, outside, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not a result file of the store"));
    assert_int_equal(access(outside, F_OK), 0);
    assert_int_equal(store_find_stored(s, f->db, &id, err, sizeof err), -1);
    snprintf(path, sizeof path, "%s/../runs/20261201T100000-aaaaaa.json", f->runs);
    assert_int_equal(store_find_stored(s, path, &id, err, sizeof err), 0);
    assert_string_equal(id, "20261201T100000-aaaaaa");
    assert_int_equal(store_remove(s, id, err, sizeof err), 0);
    free(id);
    snprintf(path, sizeof path, "%s/20261201T100000-aaaaaa.json", f->runs);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(store_remove(s, "20261201T100000-aaaaaa", err, sizeof err), -1);
    assert_string_equal(err, "unknown run '20261201T100000-aaaaaa' (see mlbench history)");
    assert_int_equal(store_find_stored(s, "base", &id, err, sizeof err), 0);
    assert_string_equal(id, "20261201T110000-bbbbbb");
    free(id);
    store_close(s);
    assert_int_equal(count(f), 1);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM stages"), 1);
}

/* store_copy: by query, by reference, what was there already, and a reference that is none. */
static void test_copy(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T100000-aaaaaa", "a", "2026-12-01T10:00:00.000Z", 150, 100);
    add(f, NULL, true, "20261201T110000-bbbbbb", "b", "2026-12-01T11:00:00.000Z", 150, -1);
    add(f, NULL, true, "20261201T120000-cccccc", "a", "2026-12-01T12:00:00.000Z", 160, 110);
    char err[512] = "", to_dir[128];
    snprintf(to_dir, sizeof to_dir, "%s/to", f->dir);
    assert_int_equal(mkdir(to_dir, 0777), 0);
    struct store *from = store_open(f->dir, err, sizeof err), *to = store_open(to_dir, err, sizeof err);
    assert_non_null(from);
    assert_non_null(to);
    size_t added = 9, there = 9;
    const struct store_query a = {.label = "a"}, all = {0};
    assert_int_equal(store_copy(from, f->dir, NULL, 0, &a, to, &added, &there, err, sizeof err), 0);
    assert_int_equal(added, 2);
    assert_int_equal(there, 0);
    struct store_entry *e;
    size_t n;
    const struct store_query with_stages = {.with_stages = true};
    assert_int_equal(store_list(to, &with_stages, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(e[0].id, "20261201T100000-aaaaaa");
    assert_string_equal(e[1].id, "20261201T120000-cccccc");
    assert_int_equal(e[1].n_stages, 1); /* the whole document was copied */
    store_entries_free(e, n);
    /* again, all of them: only b is new */
    assert_int_equal(store_copy(from, f->dir, NULL, 0, &all, to, &added, &there, err, sizeof err), 0);
    assert_int_equal(added, 1);
    assert_int_equal(there, 2);
    /* references of the store at f->dir (no open store needed), then one that is none: the
     * copy stops there, the ones before it counted */
    char *refs[] = {"b", "latest", "nope", "a"};
    assert_int_equal(store_copy(NULL, f->dir, refs, 4, NULL, to, &added, &there, err, sizeof err), -2);
    assert_int_equal(added, 0);
    assert_int_equal(there, 2);
    assert_non_null(strstr(err, "unknown run 'nope'"));
    assert_int_equal(store_exit_status(), 2);
    store_close(from);
    store_close(to);
}

/* store_history_read: the results of a query as the history's model, oldest first. */
static void test_history_read(void **state)
{
    struct fixture *f = *state;
    add(f, NULL, true, "20261201T110000-bbbbbb", "b", "2026-12-01T11:00:00.000Z", 150, -1);
    add(f, NULL, true, "20261201T100000-aaaaaa", "a", "2026-12-01T10:00:00.000Z", 140, 100);
    add(f, NULL, true, "20261201T120000-cccccc", "a", "2026-12-01T12:00:00.000Z", 160, 110);
    char err[512] = "";
    struct store *s = store_open(f->dir, err, sizeof err);
    assert_non_null(s);
    struct store_history h;
    const struct store_query a = {.label = "a"};
    assert_int_equal(store_history_read(s, &a, &h, err, sizeof err), 0);
    store_close(s); /* the model outlives the handle */
    assert_int_equal(h.doc.n_results, 2);
    assert_string_equal(h.doc.store, f->dir);
    assert_false(h.doc.hosts); /* one host, a directory store */
    const struct doc_history_result *r = &h.doc.results[0];
    assert_string_equal(r->id, "20261201T100000-aaaaaa");
    assert_string_equal(r->label, "a");
    assert_string_equal(r->command, "python3 train.py");
    assert_string_equal(r->host, "box");
    assert_string_equal(r->commit, "def456");
    assert_string_equal(r->mlbench_commit, "abc123");
    assert_int_equal(r->runs_ok, 5);
    assert_true(r->wall.median_ns == 140e6);
    assert_int_equal(r->n_stages, 1); /* the stages are read for the history */
    assert_true(doc_history_figure(r, "train")->median_ns == 100e6);
    assert_int_equal(r->load.n, 0); /* not a load result */
    assert_string_equal(h.doc.results[1].id, "20261201T120000-cccccc");
    assert_null(h.doc.series); /* the analysis's part is left empty */
    store_history_free(&h);
    assert_null(h.doc.results);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ambiguous_two, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rebuild, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_newer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_foreign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_not_sqlite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_older, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_read, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
