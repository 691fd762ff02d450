/* session: the heart of `mlbench run` and `mlbench sweep`: the repetition loop (warm-up, a fixed
 * or automatic number of runs, --prepare/--cleanup around each, --fail-fast) with everything
 * wired around it: the measuring session (markers, sampler), --serve, the progress line, then
 * the summary, the analysis and the environment of the finished runs, and the result document
 * written to the store (or, when the store fails, a fallback file) and to --output.
 *
 * One session measures one or more points (configurations), each with its own result: `run`
 * has one (session_run), a sweep several, whose repetitions it may interleave (session_step runs
 * one repetition of the point it is given). A workflow file or the default workload are turned
 * into a command before this (cli). Call from the main thread, once per process (the runner
 * owns the process's signals). */
#ifndef MLBENCH_SESSION_H
#define MLBENCH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "measure/run_config.h"
#include "result/price.h"
#include "result/result.h"

/* What a measuring session does beside measuring (what it measures is a run_config): where its
 * results go, --serve and the progress line while it runs, the price its results get. Strings
 * and the price are borrowed: whoever filled them frees them (cli: run_options_free). */
struct session_options {
    const char *store;   /* the --store value: a directory (.mlbench by default) or a shared
                          * store's URI */
    const char *output;  /* -o FILE: each point's result also written there, or NULL (a
                          * sweep's -o is its document's: its points get NULL) */
    const char *serve;   /* --serve ADDR: Prometheus /metrics while running, or NULL */
    bool quiet;          /* --quiet: no progress line (nor, in a load job, a line per run) */
    struct price_spec *price; /* --price or --price-file, parsed; NULL: not priced */
};

struct session_output {
    json_t *doc;    /* the result document, or NULL when nothing could run or it failed to build */
    char *path;     /* the file the result was written to (store or fallback), or NULL */
};

/* Measures cfg in a session of opts. Returns mlbench's exit status: 0 every run ok, 1 a run
 * failed, 2 bad input (nothing ran), 3 the harness could not start or the result could not be
 * written where asked, 127 the command was not found, 128+N stopped by signal N. out is filled
 * in every case; free it with session_output_free. */
int session_run(const struct run_config *cfg, const struct session_options *opts,
                struct session_output *out);
void session_output_free(struct session_output *out);

/* Where results are stored, as `mlbench run` stores them (session_open uses it; so does `mlbench
 * record`, which measures nothing itself). */
struct session_store {
    const char *store; /* the --store value: a directory, or a shared store's URI (borrowed) */
    char *runs_dir;    /* <store>/runs; with a shared store, the local one's (its fallback) */
    char *shared;      /* a shared store, as messages name it; NULL: a directory */
};

/* Checks store (a --store value) before anything is measured: a directory store is created
 * when missing, and must be writable with an index of ours (stale temporary files of a killed
 * mlbench are removed); a shared store that cannot be reached now is only warned about (its
 * results will be kept locally). Returns 0; 2 when the value itself is refused (another
 * scheme, a password in it); 3 when the store cannot be used (the directory cannot be made or
 * written, an index that is not ours or is newer, a shared store that refuses us): each after
 * saying why. *s is set in every case: free it with session_store_free. */
int session_store_open(struct session_store *s, const char *store);
/* Writes out->doc, the document of result id, to the store and indexes it, or, when that
 * fails, keeps it where it can (the local store for a shared one that is away, else
 * $TMPDIR/mlbench-<id>.json) and says so; then to output when not NULL. Sets out->path (the
 * file written, the shared store as named, or NULL). Returns 0, or 3 when the result could not
 * be written where asked (also when out->doc is NULL). */
int session_store_write(const struct session_store *s, const char *id, const char *output,
                      struct session_output *out);
void session_store_free(struct session_store *s);

struct session;
struct live_metrics;

/* Opens a measuring session with cfg's common settings (sampling interval, --all-gpus, --nvtx,
 * --ranks-listen; cfg must outlive the session) and opts (copied; what it points to must
 * outlive the session): checks the store, starts the runner and the session. Returns 0, or
 * mlbench's exit status (2 bad input, 3 the harness could not start) after saying why; *out is
 * set in every case: close it with session_close. */
int session_open(const struct run_config *cfg, const struct session_options *opts,
                 struct session **out);
/* Adds a point measured as cfg says (command, runs, warm-up, timeout, prepare/cleanup, label;
 * the common settings are the session's), named name for the progress lines (may be NULL;
 * copied). cfg must outlive the session. Returns its index, or -1 after saying what is wrong
 * with its command strings. */
int session_add(struct session *s, const struct run_config *cfg, const char *name);
/* Runs point i's warm-up runs when none was made yet, then one measured run. Returns the last
 * repetition run (valid until the next session_step of that point), or NULL when the point was
 * done already. */
const struct repetition *session_step(struct session *s, size_t i);
/* What runs beside a point's command, or instead of one when the point has no command (argc
 * 0): `mlbench load`'s generator beside the server it started. */
struct session_companion {
    /* Runs on a thread of its own, started as soon as the command is (pid set first) or, with
     * no command, at once (pid 0). It must return soon after *stop becomes nonzero (mlbench
     * was interrupted, or the command ended). When it returns, the command is stopped as
     * planned (the run is ok however it exits). Without a command its return value is the
     * run's exit code (0: ok). */
    int (*run)(void *arg, pid_t pid, volatile int *stop);
    void *arg;
    pid_t pid; /* the command's process id while it runs, or 0 */
};
/* One measured run of point i (no warm-up) with companion c beside it. Returns the repetition
 * (valid until the next step of that point), or NULL when the point was done already. */
const struct repetition *session_step_with(struct session *s, size_t i,
                                          struct session_companion *c);
/* Whether point i has all its runs (its -r count, or automatic mode is satisfied), or stopped:
 * --fail-fast, a command not found, session_stop, or mlbench interrupted. */
bool session_done(const struct session *s, size_t i);
/* No more runs for point i (e.g. it ran out of memory). */
void session_stop(struct session *s, size_t i);
/* Point i's result as it stands (complete once session_finish was called for it). */
const struct result *session_result(const struct session *s, size_t i);
/* Stops receiving markers: call once every point's runs are over (session_close does it too). */
void session_end_runs(struct session *s);
/* Summarises, prices and analyses point i, builds its document, adds the members of extra to
 * it (may be NULL; borrowed) and writes it (the store, then the session's -o). Call once per
 * point, after its last session_step. Returns the point's exit status as session_run does; out
 * is filled in every case (session_output_free). */
int session_finish(struct session *s, size_t i, json_t *extra, struct session_output *out);
/* The live aggregate --serve exports, or NULL without --serve. */
struct live_metrics *session_live(struct session *s);
/* Stops --serve and the session and frees everything (NULL is fine). */
void session_close(struct session *s);

/* How a run that did not succeed ended, for people: "exit status 2", "killed by SIGKILL",
 * "timeout", or why it could not start. */
void session_describe_outcome(const struct run_outcome *o, char *how, size_t len);

#endif
