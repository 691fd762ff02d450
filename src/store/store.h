/* store: the history of results. The JSON files in <store>/runs/<id>.json are the truth; an
 * index (SQLite at <store>/results.db, one backend behind struct store_ops, see store_ops.h)
 * lists every result with its label, command, host, commits, status, wall median and per-stage
 * medians, so `mlbench history`, `show`, `rm` and references such as `latest` or a label are
 * answered without reading every file. A missing or outdated index is rebuilt from the files.
 * Layout, references and options: docs/store.md. Not thread-safe per handle; any number of
 * processes may use one store at a time. */
#ifndef MLBENCH_STORE_H
#define MLBENCH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "doc/history.h"

#define STORE_DEFAULT_DIR ".mlbench"
#define STORE_INDEX_FILE "results.db" /* in the store directory */
#define STORE_RUNS_DIR "runs"         /* in the store directory */

/* One indexed result, its figures typed as the history's (doc/history.h). Strings are owned by
 * the entry; optional ones are NULL when absent. */
struct store_entry {
    char *id;
    char *path;              /* result file: relative to the store directory when inside it */
    char *label;             /* optional */
    char *command;           /* argv joined by spaces */
    char *host;              /* optional: environment.hostname */
    char *mlbench_commit;    /* optional: mlbench.git_commit */
    char *workdir_commit;    /* optional: git commit of the working directory (environment) */
    char *created;           /* ISO 8601 UTC, sorts as time */
    char *status;            /* "complete" or "interrupted" */
    long runs_measured, runs_ok;
    struct doc_history_stats wall;      /* the whole run ("total") */
    struct doc_history_stage *stages;   /* summary stages in their order (names owned) */
    json_t *doc;             /* the document, for a store that keeps it (borrowed); or NULL */
    size_t n_stages;
    /* The file as it was indexed: a file changed since (edited, truncated) is indexed again at
     * the next sync. -1 when unknown. */
    int64_t file_mtime_ns, file_size;
};

/* What store_list returns. Every filter that is NULL (or 0) is off. */
struct store_query {
    const char *id;          /* exactly this id */
    const char *id_prefix;   /* ids starting with this */
    const char *label;       /* this label */
    const char *stage;       /* that have a stage of this name */
    const char *host;        /* measured on this host (environment.hostname) */
    size_t last;             /* only the newest `last` of the matches */
    bool with_stages;        /* fill entries' stages (otherwise n_stages is 0) */
};

struct store;

/* The store directory to use when none is given: $MLBENCH_STORE when set and not empty, else
 * STORE_DEFAULT_DIR. The string is static or the environment's. */
const char *store_default_dir(void);

/* Opens the store at dir: a directory, which must exist, or a shared store (store_where). A
 * directory store is opened creating its index when missing and
 * bringing it up to date with the result files (files without rows are indexed, rows without
 * files dropped; unreadable files are skipped with a warning on stderr). An index of an older
 * version is rebuilt from the files; one of a newer version, or a file that is not an mlbench
 * index, is refused untouched. Returns a handle for store_close, or NULL with a message in err
 * ("'D/results.db' is not an mlbench store: ..."). */
struct store *store_open(const char *dir, char *err, size_t errlen);
void store_close(struct store *s);

/* Entries matching q, oldest first (by created time, then id), in *out (free with
 * store_entries_free) and their count in *n. Returns 0 or -1 with err. */
int store_list(struct store *s, const struct store_query *q, struct store_entry **out, size_t *n,
               char *err, size_t errlen);
void store_entries_free(struct store_entry *e, size_t n);

/* Resolves ref to the id of a result of this store, for removing it: as store_load resolves it, except
 * that a file path must name a result file in the store's runs/ directory (anything else is
 * refused with a message). *id_out is owned by the caller. Returns 0 or -1 with err. */
int store_find_stored(struct store *s, const char *ref, char **id_out, char *err, size_t errlen);

/* Removes the stored result id: its index rows and its file, in one transaction (the rows go
 * only when the file could be removed; a file indexed from outside the store is left alone, only
 * its rows go). A result file the index left out (unreadable) is removed too. Returns 0, or -1
 * with err ("unknown run 'x' ..." when there is no such result). */
int store_remove(struct store *s, const char *id, char *err, size_t errlen);

/* Indexes a result just written to result_path in the store at store_dir (what `mlbench run`
 * calls after writing the file). result is the document (borrowed), or NULL to read it from
 * result_path. Opens and closes the index; creates it (and indexes older files) when missing.
 * Returns 0, or -1 with a message in err. Safe to call from several processes at once: each
 * result lands. */
int store_record(const char *store_dir, const char *result_path, json_t *result, char *err,
                 size_t errlen);

/* Checks that the store at store_dir (which must exist) can index results: opens its index,
 * creating it when missing, and closes it. For `mlbench run` to refuse a store whose index is
 * not ours, or is newer, before running anything. Returns 0, or -1 with a message in err. */
int store_check(const char *store_dir, char *err, size_t errlen);

/* Loads the result ref names: a file path (contains '/' or ends in ".json": read as it is,
 * no store opened), or `latest`, an id, a label (its newest result) or a unique id prefix of
 * the store at store_dir, tried in that order. *name_out (owned by the caller) says where it
 * was read: the file, or the shared store as shown. Returns the document (owned by the caller),
 * or NULL with a message in err: "unknown run 'x' (see mlbench history)", "ambiguous prefix
 * 'ab' matches ID1 and ID2", or why the store cannot be read (store_exit_status says 2 or 3). */
json_t *store_load(const char *store_dir, const char *ref, char **name_out, char *err,
                   size_t errlen);

/* Whether where (a --store value) is a directory (0) or a shared PostgreSQL store (1, a
 * postgresql:// URI or libpq's keyword=value form); -1 with err for one refused (another
 * scheme, a password in it). *shown (owned by the caller; may be NULL) is what messages and
 * documents may name: the directory, or "postgresql://host/database" and nothing else. */
int store_where(const char *where, char **shown, char *err, size_t errlen);

/* The exit status a failure of the last store call in this thread deserves: 3 when a shared
 * store could not be reached or failed while writing (try again later), 2 otherwise. */
int store_exit_status(void);

/* Adds result doc (borrowed) to the open store s unless a result of its id is there: a
 * directory store writes runs/<id>.json and indexes it, a shared one inserts it in one
 * transaction. Returns 1 when added, 0 when it was there (the same id twice is one result),
 * -1 with err. */
int store_add(struct store *s, json_t *doc, char *err, size_t errlen);

/* Copies results into the open store to, each with store_add: the n_refs results that refs
 * names (each read as store_load reads a reference of the store at from_dir; from may then be
 * NULL) or, when refs is NULL, those of the open store from that q matches. Stops at the first
 * that cannot be read or added. *added and *there count the results added and those that were
 * there already, on failure too. Returns 0; -1 with err when the results of from could not be
 * listed (nothing was tried), -2 with err when one could not be copied (store_exit_status says
 * 2 or 3 either way). */
int store_copy(struct store *from, const char *from_dir, char *const *refs, size_t n_refs,
               const struct store_query *q, struct store *to, size_t *added, size_t *there,
               char *err, size_t errlen);

/* The document of entry e of the open store s (from store_list): its file, or the shared
 * store's row. Owned by the caller; NULL with err. */
json_t *store_get(struct store *s, const struct store_entry *e, char *err, size_t errlen);

/* How messages name the open store s (its directory, or the shared store as shown), and
 * whether it is a shared database. */
const char *store_name(const struct store *s);
bool store_is_shared(const struct store *s);

#endif
