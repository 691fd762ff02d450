/* store_ops: the interface an index backend of the result store implements (one backend = one
 * file = one struct store_ops, listed in the table in store.c). A backend keeps rows; store.c
 * keeps the logic (what a reference means, keeping the index in step with the result files), so
 * a server database can follow the embedded SQLite one by writing these few functions. */
#ifndef MLBENCH_STORE_OPS_H
#define MLBENCH_STORE_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

struct store_ops {
    const char *name;
    /* Opens the index of the store in directory dir (which exists), creating it when absent.
     * Sets *fresh when the index is new or was reset (an older version: it is an index, the
     * files are the truth), so the caller indexes every result file. Refuses an index of a
     * newer version, or anything that is not an mlbench index, without modifying it: -1 with a
     * message "'PATH' is not an mlbench store: ..." in err. */
    int (*open)(const char *dir, void **handle, bool *fresh, char *err, size_t errlen);
    void (*close)(void *handle);
    /* Adds entries e[0..n), replacing rows with the same id, in one transaction. Entries'
     * paths are as they should be kept (relative to the store directory when inside it). */
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
};

/* The backends (store.c lists them). */
extern const struct store_ops store_sqlite_ops;

#endif
