/* store: the result store's logic above its backends (see store.h): what a reference means,
 * keeping an index in step with the result files (the truth of a directory store), and the
 * table of backends. The rows themselves are kept by a backend: sqlite.c indexes a directory,
 * postgres.c keeps the documents of a shared store. */
#include "store/store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "result/result.h"
#include "doc/result_file.h"
#include "util/xalloc.h"
#include "store/store_ops.h"
#include "util/fsx.h"
#include "util/jsonx.h"

/* The backends: the index of a directory store (the default), and the shared database that
 * a --store connection string names (store_pg_parse tells which). */
static const struct store_ops *const backends[] = {
    &store_sqlite_ops,
    &store_postgres_ops,
};

struct store {
    const struct store_ops *ops;
    void *handle;
    char *dir;      /* as given (a shared store: as shown): used in what the user reads */
    char *real;     /* canonical: to tell whether a file lies inside the store; NULL: shared */
};

static _Thread_local int last_status = 2;

int store_exit_status(void)
{
    return last_status;
}

/* Sets what store_exit_status says of a failure with backend code rc (see store_ops.h). */
static int failed(const struct store *s, int rc)
{
    last_status = s && s->ops->get && rc != STORE_REFUSED ? 3 : 2;
    return -1;
}

int store_where(const char *where, char **shown, char *err, size_t errlen)
{
    char *pg = NULL;
    int rc = store_pg_parse(where, &pg, err, errlen);
    if (rc < 0)
        last_status = 2;
    if (shown)
        *shown = rc == 1 ? pg : rc == 0 ? xstrdup(where) : NULL;
    else
        free(pg);
    return rc;
}

const char *store_default_dir(void)
{
    const char *env = getenv("MLBENCH_STORE");
    return env && *env ? env : STORE_DEFAULT_DIR;
}

/* ------------------------------------------------------------------ paths */

/* How a result file's path is kept in the index: relative to the store when inside it (so the
 * store can be moved), else canonical. Owned by the caller. */
static char *kept_path(const struct store *s, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return xstrdup(path);
    size_t n = strlen(s->real);
    if (!strncmp(real, s->real, n) && real[n] == '/')
        return xstrdup(real + n + 1);
    return xstrdup(real);
}

/* A kept path as a path to open. Owned by the caller. */
static char *usable_path(const struct store *s, const char *kept)
{
    return kept[0] == '/' ? xstrdup(kept) : xasprintf("%s/%s", s->dir, kept);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ------------------------------------------------------------------ keeping in step */

struct name_list {
    char **v;
    size_t n, cap;
};

static void names_add(struct name_list *l, char *s)
{
    l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = s;
}

static void names_free(struct name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* The result files in <dir>/runs, as kept paths ("runs/<name>.json"), sorted. A missing runs/
 * is an empty store. */
static int list_files(const struct store *s, struct name_list *files, char *err, size_t errlen)
{
    char *runs = xasprintf("%s/%s", s->dir, STORE_RUNS_DIR);
    DIR *d = opendir(runs);
    if (!d) {
        int e = errno;
        free(runs);
        if (e == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read the result store '%s/%s': %s", s->dir,
                 STORE_RUNS_DIR, strerror(e));
        return -1;
    }
    const struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        /* Temporary files of an atomic write end in .tmp.PID.XXXXXX: not results yet. */
        if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        names_add(files, xasprintf("%s/%s", STORE_RUNS_DIR, de->d_name));
    }
    closedir(d);
    free(runs);
    if (files->n)
        qsort(files->v, files->n, sizeof *files->v, cmp_str);
    return 0;
}

/* The file's modification time and size as the index keeps them (-1 when it cannot be read). */
static void file_stamp(const char *real_path, int64_t *mtime_ns, int64_t *size)
{
    struct stat st;
    *mtime_ns = *size = -1;
    if (stat(real_path, &st) == 0) {
        *mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        *size = (int64_t)st.st_size;
    }
}

/* Indexes result files that have no row, indexes again those changed since (a file that no
 * longer reads is dropped, with a warning) and drops rows whose file is gone: the files are
 * the truth. */
static int store_sync(struct store *s, char *err, size_t errlen)
{
    char *runs = xasprintf("%s/%s", s->dir, STORE_RUNS_DIR);
    fsx_clean_stale(runs, ".tmp.", NULL); /* what writers that died left: never results */
    free(runs);
    struct store_query q = {0};
    struct store_entry *rows = NULL;
    size_t n_rows = 0;
    if (s->ops->list(s->handle, &q, &rows, &n_rows, err, errlen) < 0)
        return -1;
    struct name_list files = {0};
    int rc = list_files(s, &files, err, errlen);
    /* kept: paths of all rows; ids: ids of the rows that stay, then of the files added */
    char **kept = xcalloc(n_rows + 1, sizeof *kept);
    char **ids = xcalloc(n_rows + files.n + 1, sizeof *ids);
    const char **gone = xcalloc(n_rows + 1, sizeof *gone);
    size_t n_gone = 0, n_ids = 0;
    size_t n_kept = 0;
    for (size_t i = 0; i < n_rows; i++) {
        char *path = usable_path(s, rows[i].path);
        int64_t mtime, size;
        file_stamp(path, &mtime, &size);
        if (access(path, F_OK) < 0 && errno == ENOENT) {
            gone[n_gone++] = rows[i].id;
        } else if (mtime != rows[i].file_mtime_ns || size != rows[i].file_size) {
            gone[n_gone++] = rows[i].id; /* changed: indexed again below, from the file */
        } else {
            kept[n_kept++] = rows[i].path;
            ids[n_ids++] = rows[i].id;
        }
        free(path);
    }
    qsort(kept, n_kept, sizeof *kept, cmp_str);
    qsort(ids, n_ids, sizeof *ids, cmp_str);
    size_t n_sorted = n_ids;

    struct store_entry *add = xcalloc(files.n + 1, sizeof *add);
    size_t n_add = 0;
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        if (bsearch(&files.v[i], kept, n_kept, sizeof *kept, cmp_str))
            continue;
        char *path = usable_path(s, files.v[i]), msg[1024];
        json_t *j = doc_result_load_file(path, msg, sizeof msg);
        if (!j) {
            log_warn("%s (left out of the store index)", msg);
        } else if (store_entry_from_json(j, files.v[i], &add[n_add]) == 0) {
            file_stamp(path, &add[n_add].file_mtime_ns, &add[n_add].file_size);
            /* Two files with one id (a copy under another name) would replace each other's
             * row at every sync: the first keeps it. */
            char *id = add[n_add].id;
            bool dup = bsearch(&id, ids, n_sorted, sizeof *ids, cmp_str) != NULL;
            for (size_t k = n_sorted; k < n_ids && !dup; k++)
                dup = !strcmp(ids[k], id);
            if (dup) {
                log_warn("%s: has the id %s of another stored result (a copy?): left out of the "
                         "store index", path, id);
                store_entry_clear(&add[n_add]);
            } else {
                ids[n_ids++] = id;
                n_add++;
            }
        }
        json_decref(j);
        free(path);
    }
    if (rc == 0 && n_gone)
        rc = s->ops->remove(s->handle, gone, n_gone, NULL, NULL, err, errlen);
    if (rc == 0 && n_add)
        rc = s->ops->put(s->handle, add, n_add, err, errlen);
    store_entries_free(add, n_add);
    free(gone);
    free(kept);
    free(ids);
    names_free(&files);
    store_entries_free(rows, n_rows);
    return rc;
}

/* ------------------------------------------------------------------ opening */

/* Opens the store; with sync_always the index is brought in step with the files, otherwise
 * only when it is new (first use, or rebuilt after an older version). */
static struct store *open_store(const char *dir, bool sync_always, char *err, size_t errlen)
{
    char *shown = NULL;
    int kind = store_where(dir, &shown, err, errlen);
    if (kind < 0)
        return NULL;
    last_status = 2;
    if (kind == 1) {
        struct store *s = xcalloc(1, sizeof *s);
        s->ops = backends[1];
        bool fresh;
        int rc = s->ops->open(dir, &s->handle, &fresh, err, errlen);
        if (rc < 0) {
            failed(s, rc);
            free(shown);
            free(s);
            return NULL;
        }
        s->dir = xstrdup(s->ops->shown(s->handle));
        free(shown);
        return s;
    }
    free(shown);
    struct stat st;
    if (stat(dir, &st) < 0) {
        if (errno == ENOENT)
            snprintf(err, errlen, "no result store at '%s' (mlbench run makes one; choose another "
                     "with --store DIR or MLBENCH_STORE)", dir);
        else
            snprintf(err, errlen, "cannot use the result store '%s': %s", dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the result store '%s' is not a directory (choose another with "
                 "--store DIR or MLBENCH_STORE)", dir);
        return NULL;
    }
    char real[PATH_MAX];
    if (!realpath(dir, real)) {
        snprintf(err, errlen, "cannot use the result store '%s': %s", dir, strerror(errno));
        return NULL;
    }
    struct store *s = xcalloc(1, sizeof *s);
    s->ops = backends[0];
    s->dir = xstrdup(dir);
    s->real = xstrdup(real);
    bool fresh = false;
    if (s->ops->open(dir, &s->handle, &fresh, err, errlen) < 0 ||
        ((fresh || sync_always) && store_sync(s, err, errlen) < 0)) {
        store_close(s);
        return NULL;
    }
    return s;
}

struct store *store_open(const char *dir, char *err, size_t errlen)
{
    return open_store(dir, true, err, errlen);
}

void store_close(struct store *s)
{
    if (!s)
        return;
    if (s->handle)
        s->ops->close(s->handle);
    free(s->dir);
    free(s->real);
    free(s);
}

/* ------------------------------------------------------------------ rows */

/* Indexes result (a document as doc_result_load_file returns it; borrowed), written at path, in
 * one transaction; a result with the same id is replaced. Returns 0 or -1 with err. */
static int store_put(struct store *s, const char *path, json_t *result, char *err,
                     size_t errlen)
{
    struct store_entry e;
    char *kept = kept_path(s, path);
    int rc = store_entry_from_json(result, kept, &e);
    free(kept);
    char *real = usable_path(s, e.path ? e.path : path);
    file_stamp(real, &e.file_mtime_ns, &e.file_size);
    free(real);
    if (rc < 0) {
        snprintf(err, errlen, "%s: a result without an id cannot be indexed", path);
        return -1;
    }
    rc = s->ops->put(s->handle, &e, 1, err, errlen);
    store_entry_clear(&e);
    return rc;
}

int store_list(struct store *s, const struct store_query *q, struct store_entry **out, size_t *n,
               char *err, size_t errlen)
{
    int rc = s->ops->list(s->handle, q, out, n, err, errlen);
    if (rc < 0)
        return failed(s, rc);
    for (size_t i = 0; i < *n && (*out)[i].path; i++) {
        char *p = usable_path(s, (*out)[i].path);
        free((*out)[i].path);
        (*out)[i].path = p;
    }
    return 0;
}

/* The one entry matching q (its id and path moved to the caller), or 0 when none: returns the
 * number of matches (2 or more: the first two ids are in ids[0..1], owned by the caller), or -1
 * with err. */
static int match(struct store *s, const struct store_query *q, char **id, char **path,
                 char *ids[2], size_t *n_out, char *err, size_t errlen)
{
    struct store_entry *e;
    size_t n;
    if (store_list(s, q, &e, &n, err, errlen) < 0)
        return -1;
    if (n == 1) {
        *id = e[0].id;
        *path = e[0].path;
        e[0].id = e[0].path = NULL;
    } else if (n >= 2 && ids) {
        ids[0] = xstrdup(e[0].id);
        ids[1] = xstrdup(e[1].id);
    }
    *n_out = n;
    store_entries_free(e, n);
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* A reference written as a path (with '/' or ending in .json) names a file. When there is no
 * such file it may still be a label: a pytest test id is "tests/test_x.py::test_sort" (the
 * plugin of python/ labels results so); tried as one, else the file's own error follows. */
static bool is_path(const char *ref)
{
    size_t len = strlen(ref);
    return strchr(ref, '/') || (len >= 5 && !strcmp(ref + len - 5, ".json"));
}

static bool is_file(const char *ref)
{
    return is_path(ref) && access(ref, F_OK) == 0;
}

/* Resolves ref as store_load does, with an open store. On success *path_out (owned by the
 * caller) is the result file: a path as given, or one inside the store; *id_out (owned, may be
 * NULL when not wanted) is the id of a stored result, or NULL for a file given by path. */
static int store_find(struct store *s, const char *ref, char **path_out, char **id_out,
                      char *err, size_t errlen)
{
    char *id = NULL, *path = NULL, *two[2] = {NULL, NULL};
    size_t n = 0;
    int rc;
    *path_out = NULL;
    if (id_out)
        *id_out = NULL;
    if (is_file(ref)) {
        *path_out = xstrdup(ref);
        return 0;
    }
    if (!*ref) {
        snprintf(err, errlen, "an empty reference: give an id, a label, latest or a file");
        return -1;
    }
    char *tilde = NULL;
    unsigned long back = 0;
    if (!strncmp(ref, "latest~", 7) && isdigit((unsigned char)ref[7])) {
        errno = 0;
        back = strtoul(ref + 7, &tilde, 10);
        if (*tilde || errno || back > 100000000) {
            snprintf(err, errlen, "'%s': give latest~N, N a number of results before the "
                     "newest", ref);
            return failed(s, STORE_REFUSED);
        }
    }
    if (!strcmp(ref, "latest") || tilde) {
        /* latest~N: the newest N + 1, of which the oldest */
        struct store_query q = {.last = back + 1};
        struct store_entry *e;
        if (store_list(s, &q, &e, &n, err, errlen) < 0)
            return -1;
        if (n == back + 1) {
            id = e[0].id;
            path = e[0].path;
            e[0].id = e[0].path = NULL;
        }
        store_entries_free(e, n);
        rc = n == back + 1;
        if (rc == 0 && back) {
            snprintf(err, errlen, "'%s': the store '%s' holds %zu result%s (see mlbench history)",
                     ref, s->dir, n, n == 1 ? "" : "s");
            return failed(s, STORE_REFUSED);
        }
        if (rc == 0) {
            snprintf(err, errlen, "no results in the store '%s' yet (mlbench run records them)",
                     s->dir);
            return failed(s, STORE_REFUSED);
        }
        goto found;
    }
    struct store_query by_id = {.id = ref};
    if ((rc = match(s, &by_id, &id, &path, NULL, &n, err, errlen)) < 0)
        return -1;
    if (rc == 1)
        goto found;
    /* A result file the index left out (unreadable) is still named by its id, so that show
     * can say what is wrong with it and rm can remove it. */
    path = s->real ? xasprintf("%s/%s/%s.json", s->dir, STORE_RUNS_DIR, ref) : NULL;
    if (path && access(path, F_OK) == 0) {
        id = xstrdup(ref);
        goto found;
    }
    free(path);
    path = NULL;
    struct store_query by_label = {.label = ref, .last = 1};
    if ((rc = match(s, &by_label, &id, &path, NULL, &n, err, errlen)) < 0)
        return -1;
    if (rc == 1)
        goto found;
    if (is_path(ref)) { /* not a label either: the missing file */
        *path_out = xstrdup(ref);
        return 0;
    }
    struct store_query by_prefix = {.id_prefix = ref};
    if ((rc = match(s, &by_prefix, &id, &path, two, &n, err, errlen)) < 0)
        return -1;
    if (rc == 1)
        goto found;
    last_status = 2;
    if (rc == 0)
        snprintf(err, errlen, "unknown run '%s' (see mlbench history)", ref);
    else if (n == 2)
        snprintf(err, errlen, "ambiguous prefix '%s' matches %s and %s", ref, two[0], two[1]);
    else
        snprintf(err, errlen, "ambiguous prefix '%s' matches %s, %s and %zu more", ref, two[0],
                 two[1], n - 2);
    free(two[0]);
    free(two[1]);
    return -1;
found:
    *path_out = path;
    if (id_out)
        *id_out = id;
    else
        free(id);
    return 0;
}

struct unlink_arg {
    const char *path; /* NULL: a file outside the store, which rm leaves alone */
    char *aside;      /* where the file waits for the commit: a temporary name (not a result) */
};

/* Moves the file aside inside the transaction: if the commit fails it is put back, so the
 * index never keeps a row for a file that is gone (unlinking it here could not be undone). The
 * name ".tmp.PID.remove" is skipped by list_files and cleaned by fsx_clean_stale once we are
 * gone, should we die before the end. */
static int move_aside(void *arg, char *err, size_t errlen)
{
    struct unlink_arg *u = arg;
    if (!u->path)
        return 0;
    char *aside = xasprintf("%s.tmp.%ld.remove", u->path, (long)getpid());
    if (rename(u->path, aside) < 0) {
        int e = errno;
        free(aside);
        if (e == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot remove %s: %s", u->path, strerror(e));
        return -1;
    }
    u->aside = aside;
    return 0;
}

int store_remove(struct store *s, const char *id, char *err, size_t errlen)
{
    struct store_query q = {.id = id};
    struct store_entry *e;
    size_t n;
    int rc = s->ops->list(s->handle, &q, &e, &n, err, errlen);
    if (rc < 0)
        return failed(s, rc);
    if (!s->real) { /* shared: the row is the result */
        store_entries_free(e, n);
        if (n == 0) {
            snprintf(err, errlen, "unknown run '%s' (see mlbench history)", id);
            return failed(s, STORE_REFUSED);
        }
        rc = s->ops->remove(s->handle, &id, 1, NULL, NULL, err, errlen);
        return rc < 0 ? failed(s, rc) : 0;
    }
    char *path;
    if (n == 1 && e[0].path[0] == '/')
        path = NULL; /* indexed from outside the store: only the row goes */
    else if (n == 1)
        path = usable_path(s, e[0].path);
    else
        path = xasprintf("%s/%s/%s.json", s->dir, STORE_RUNS_DIR, id);
    store_entries_free(e, n);
    if (n == 0 && access(path, F_OK) < 0) {
        snprintf(err, errlen, "unknown run '%s' (see mlbench history)", id);
        free(path);
        return -1;
    }
    struct unlink_arg u = {path, NULL};
    rc = s->ops->remove(s->handle, &id, 1, move_aside, &u, err, errlen);
    if (u.aside && rc < 0 && rename(u.aside, path) < 0) /* the rows stay: so does the file */
        log_error("cannot put %s back after a failed removal: %s (it is kept as %s: move it "
                  "back)", path, strerror(errno), u.aside);
    else if (u.aside && rc == 0 && unlink(u.aside) < 0) /* removed from the store anyway */
        log_warn("cannot delete %s: %s (the next mlbench command deletes it)", u.aside,
                 strerror(errno));
    free(u.aside);
    free(path);
    return rc;
}

int store_find_stored(struct store *s, const char *ref, char **id_out, char *err, size_t errlen)
{
    char *path = NULL, *id = NULL;
    *id_out = NULL;
    if (store_find(s, ref, &path, &id, err, errlen) < 0)
        return -1;
    if (id) {
        free(path);
        *id_out = id;
        return 0;
    }
    if (!s->real) {
        snprintf(err, errlen, "%s is a file, not a result of the shared store %s: give the id "
                 "of the result (see mlbench history)", path, s->dir);
        free(path);
        return failed(s, STORE_REFUSED);
    }
    /* A file path: only a result file of this store's runs/ may go. */
    char real[PATH_MAX], runs[PATH_MAX + 8];
    snprintf(runs, sizeof runs, "%s/%s/", s->real, STORE_RUNS_DIR);
    if (!realpath(path, real)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(path);
        return -1;
    }
    size_t n = strlen(runs), len = strlen(real);
    if (strncmp(real, runs, n) != 0 || strchr(real + n, '/') || len < n + 6 ||
        strcmp(real + len - 5, ".json") != 0) {
        snprintf(err, errlen, "%s is not a result file of the store '%s' (refused: rm only "
                 "removes results in %s/%s/)", path, s->dir, s->dir, STORE_RUNS_DIR);
        free(path);
        return -1;
    }
    free(path);
    *id_out = xstrndup(real + n, len - n - 5);
    return 0;
}

/* ------------------------------------------------------------------ one-call helpers */

int store_record(const char *store_dir, const char *result_path, json_t *result, char *err,
                 size_t errlen)
{
    json_t *loaded = NULL;
    if (!result && !(result = loaded = doc_result_load_file(result_path, err, errlen)))
        return -1;
    struct store *s = open_store(store_dir, false, err, errlen);
    int rc = -1;
    if (s && s->real) {
        rc = store_put(s, result_path, result, err, errlen);
    } else if (s) {
        rc = store_add(s, result, err, errlen) < 0 ? -1 : 0;
    }
    store_close(s);
    json_decref(loaded);
    return rc;
}

int store_check(const char *store_dir, char *err, size_t errlen)
{
    struct store *s = open_store(store_dir, false, err, errlen);
    store_close(s);
    return s ? 0 : -1;
}

json_t *store_load(const char *store_dir, const char *ref, char **name_out, char *err,
                   size_t errlen)
{
    *name_out = NULL;
    last_status = 2;
    struct store *s = is_file(ref) ? NULL : store_open(store_dir, err, errlen);
    if (!s && is_path(ref)) { /* a file (or no store to find a label in: the file's error) */
        json_t *doc = doc_result_load_file(ref, err, errlen);
        if (doc)
            *name_out = xstrdup(ref);
        return doc;
    }
    if (!s)
        return NULL;
    char *path = NULL, *id = NULL;
    json_t *doc = NULL;
    if (store_find(s, ref, &path, &id, err, errlen) == 0) {
        struct store_entry found = {.id = id, .path = path};
        doc = store_get(s, &found, err, errlen);
    }
    if (doc)
        *name_out = path ? path : xstrdup(s->dir);
    else
        free(path);
    free(id);
    store_close(s);
    return doc;
}

int store_copy(struct store *from, const char *from_dir, char *const *refs, size_t n_refs,
               const struct store_query *q, struct store *to, size_t *added, size_t *there,
               char *err, size_t errlen)
{
    struct store_entry *e = NULL;
    size_t n = n_refs;
    *added = *there = 0;
    if (!refs && store_list(from, q, &e, &n, err, errlen) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *name = NULL;
        json_t *doc = refs ? store_load(from_dir, refs[i], &name, err, errlen)
                           : store_get(from, &e[i], err, errlen);
        free(name);
        int got = doc ? store_add(to, doc, err, errlen) : -1;
        rc = got < 0 ? -2 : 0;
        *added += got == 1;
        *there += got == 0;
        json_decref(doc);
    }
    store_entries_free(e, refs ? 0 : n);
    return rc;
}

int store_add(struct store *s, json_t *doc, char *err, size_t errlen)
{
    const char *id = json_string_value(json_object_get(doc, "id"));
    if (!id || !*id || strchr(id, '/') || id[0] == '.') {
        snprintf(err, errlen, "a result without a usable id cannot be stored");
        return failed(s, STORE_REFUSED);
    }
    if (s->real) {
        char *path = xasprintf("%s/%s/%s.json", s->dir, STORE_RUNS_DIR, id);
        int rc = 0;
        if (access(path, F_OK) != 0) {
            char *runs = xasprintf("%s/%s", s->dir, STORE_RUNS_DIR);
            rc = fsx_mkdirs(runs) == 0 && result_write_json(doc, path, err, errlen) == 0 &&
                         store_put(s, path, doc, err, errlen) == 0
                     ? 1
                     : -1;
            if (rc < 0 && !*err)
                snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            free(runs);
        }
        free(path);
        return rc;
    }
    struct store_entry e;
    store_entry_from_json(doc, "", &e);
    e.doc = doc;
    int rc = s->ops->put(s->handle, &e, 1, err, errlen);
    store_entry_clear(&e);
    return rc < 0 ? failed(s, rc) : rc;
}

json_t *store_get(struct store *s, const struct store_entry *e, char *err, size_t errlen)
{
    if (e->path) {
        json_t *doc = doc_result_load_file(e->path, err, errlen);
        if (!doc)
            failed(s, STORE_REFUSED);
        return doc;
    }
    json_t *doc = NULL;
    int rc = s->ops->get(s->handle, e->id, &doc, err, errlen);
    if (rc < 0)
        failed(s, rc);
    return doc;
}

const char *store_name(const struct store *s)
{
    return s->dir;
}

bool store_is_shared(const struct store *s)
{
    return !s->real;
}
