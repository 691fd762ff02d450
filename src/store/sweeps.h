/* sweeps: the sweep documents of a store ("mlbench.sweep/1" in <store>/sweeps/<id>.json,
 * docs/sweep.md): finding one by reference, loading it, and the result files of its points, for
 * `mlbench compare` and `mlbench report` of a sweep. The files are the truth (no index: a
 * store holds few sweeps, and their ids sort by time). */
#ifndef MLBENCH_STORE_SWEEPS_H
#define MLBENCH_STORE_SWEEPS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define STORE_SWEEPS_DIR "sweeps" /* in the store directory */

/* Whether ref names a sweep rather than a result: "latest-sweep" or "sweep:ID" (an id or a
 * unique prefix of one). A file path is a sweep when its document says so (store_sweep_load
 * tells). Pure. */
bool store_is_sweep_ref(const char *ref);

/* Loads the sweep document ref names: "latest-sweep", "sweep:ID" in the store at store_dir, or
 * a file path. The document must have schema "mlbench.sweep/1" (DOC_SWEEP_SCHEMA) and an array
 * of points (read with doc/sweep.h). Returns a new reference and its file in *path_out (owned),
 * or NULL with a message in err ("no sweep 'x' in STORE (see ls STORE/sweeps)", the JSON error
 * with its line and column, ...). */
json_t *store_sweep_load(const char *store_dir, const char *ref, char **path_out, char *err,
                         size_t errlen);

/* The result files of the sweep's points that have one, in point order but with the point
 * named reference first (NULL: the first point with a result); paths are resolved against the
 * store the sweep file is in (the parent of its sweeps/ directory), or store_dir for a file kept
 * elsewhere. *paths (n of them, each owned, and the
 * array) and *names (borrowed from sweep) are the caller's; n may be 0. A point whose result
 * path leaves the store (absolute, or with "..": an edited file) is left out with a warning on
 * stderr. Returns 0, or -1 with a message when no point is named reference (the names are
 * listed). */
int store_sweep_results(const json_t *sweep, const char *sweep_path, const char *store_dir,
                        const char *reference, char ***paths, const char ***names, size_t *n,
                        char *err, size_t errlen);

#endif
