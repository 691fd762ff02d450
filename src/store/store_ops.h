/* store_ops: the interface a backend of the result store implements (one backend = one file =
 * one struct store_ops, listed in the table in store.c). A backend keeps rows; store.c keeps
 * the logic (what a reference means, keeping an index in step with the result files). Two
 * kinds: an index of the result files in a directory (SQLite: get is NULL, the files are the
 * truth), and a database that keeps the documents themselves (PostgreSQL: get reads one). */
#ifndef MLBENCH_STORE_OPS_H
#define MLBENCH_STORE_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

/* What open returns besides 0 and -1 (any other failure). */
#define STORE_REFUSED (-2)     /* not an mlbench store, or a newer one: untouched (exit 2) */
#define STORE_UNREACHABLE (-3) /* a database that could not be connected to (exit 3) */

struct store_ops {
    const char *name;
    /* Opens the store at where (a directory that exists, or a connection string), creating its
     * tables when absent. Sets *fresh when they are new or were reset (an older index: the
     * files are the truth), so the caller indexes every result file. Refuses a store of a
     * newer version, or anything that is not an mlbench store, without modifying it:
     * STORE_REFUSED (SQLite: -1) with a message "... is not an mlbench store: ..." in err. */
    int (*open)(const char *where, void **handle, bool *fresh, char *err, size_t errlen);
    void (*close)(void *handle);
    /* Adds entries e[0..n). An index replaces rows with the same id, in one transaction, and
     * keeps the entries' paths (relative to the store directory when inside it); a database of
     * documents keeps each entry's doc, one transaction per result, and keeps the first of two
     * with one id. Returns how many were new (an index: 0), or -1 with err. */
    int (*put)(void *handle, const struct store_entry *e, size_t n, char *err, size_t errlen);
    /* Entries matching q, oldest first (created time, then id); paths as kept. */
    int (*list)(void *handle, const struct store_query *q, struct store_entry **out, size_t *n,
                char *err, size_t errlen);
    /* Removes the rows of ids[0..n) in one transaction. When inside is not NULL it is called in
     * the transaction after the rows are deleted and before the commit; a nonzero return rolls
     * the transaction back (inside has then written err) and remove returns -1. */
    int (*remove)(void *handle, const char *const *ids, size_t n,
                  int (*inside)(void *arg, char *err, size_t errlen), void *arg, char *err,
                  size_t errlen);
    /* A database of documents only (NULL for an index): the document of result id (owned by
     * the caller) in *doc. STORE_REFUSED when there is none ("unknown run"), -1 on failure. */
    int (*get)(void *handle, const char *id, json_t **doc, char *err, size_t errlen);
    /* A database only: how messages name it, "postgresql://host/db" (nothing else of the
     * connection string). */
    const char *(*shown)(void *handle);
};

/* The backends (store.c lists them). */
extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_postgres_ops;

/* Fills e from a result document (borrowed; missing fields give NULL, 0 or NAN) and path
 * (copied). Returns 0, or -1 when result has no string id (e is then empty). Release with
 * store_entry_clear (store_entry.c). */
int store_entry_from_json(json_t *result, const char *path, struct store_entry *e);
/* Frees what e owns and zeroes it (e itself is the caller's). */
void store_entry_clear(struct store_entry *e);

/* Whether where names a PostgreSQL database: a postgresql:// or postgres:// URI, or libpq's
 * "keyword=value ..." form. 1 with the name messages may show in *shown (owned by the caller),
 * 0 for a directory, -1 with err for another scheme, an unreadable string or one carrying a
 * password (refused: passwords go in libpq's password file). */
int store_pg_parse(const char *where, char **shown, char *err, size_t errlen);

#endif
