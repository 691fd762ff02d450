/* bench: the repetition loop and the run wiring of `mlbench run` (see bench.h). Measuring one
 * run is measure/runner.c, markers measure/markers.c, the summary result/summary.c. */
#include "bench/bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/http_server.h"
#include "live/live.h"
#include "measure/attrib.h"
#include "measure/cmdline.h"
#include "measure/progress.h"
#include "measure/runner.h"
#include "measure/session.h"
#include "measure/stages.h"
#include "result/resources.h"
#include "result/result.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/fsx.h"
#include "util/log.h"
#include "util/units.h"
#include "util/xalloc.h"

struct bench {
    const struct run_config *cfg;
    struct bench_result result;
    struct session session;
    struct live_metrics *live;     /* --serve */
    struct http_server *server;
    struct progress progress;
    char *nvtx_var;        /* "NVTX_INJECTION64_PATH=..." for the command, or NULL */
    char *joined;          /* --shell: the command's words joined into one line */
    char *runs_dir;        /* <store>/runs */
    struct cmdline cmd, prepare, cleanup;
    int planned;           /* total runs expected, warm-up included (estimate in auto mode) */
    int done;              /* runs finished */
    int64_t sum_wall_ns;   /* of finished runs */
    int64_t measured_ns;   /* of finished measured runs */
    int measured;
    bool printed_failure;  /* the first failure's details were shown */
    char what[48];         /* "run 3/10" for the status line */
};

/* The NVTX injection library: $MLBENCH_NVTX_LIBRARY, else beside this binary in the build tree
 * (lib/nvtx/), else installed (the configured libdir, or ../lib/). Returns an owned path, or
 * NULL. */
static char *nvtx_library(void)
{
    const char *env = getenv("MLBENCH_NVTX_LIBRARY");
    if (env && *env)
        return access(env, R_OK) == 0 ? xstrdup(env) : NULL;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    const char *rel[] = {"lib/nvtx/libmlbench_nvtx.so", "../lib/libmlbench_nvtx.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char *path = xasprintf("%s/%s", exe, rel[i]);
        if (access(path, R_OK) == 0)
            return path;
        free(path);
    }
#ifdef MLBENCH_LIBDIR
    char *installed = xasprintf("%s/libmlbench_nvtx.so", MLBENCH_LIBDIR);
    if (access(installed, R_OK) == 0)
        return installed;
    free(installed);
#endif
    return NULL;
}

static void tick(void *arg, int64_t elapsed_ns)
{
    struct bench *b = arg;
    char stage[128];
    markers_current_stage(b->session.markers, stage, sizeof stage);
    int64_t eta = -1;
    if (b->done > 0) {
        int64_t mean = b->sum_wall_ns / b->done;
        eta = (int64_t)(b->planned - b->done) * mean - elapsed_ns;
        if (eta < 0)
            eta = 0;
    }
    progress_status(&b->progress, b->what, stage, elapsed_ns, eta);
}

/* How a run that did not succeed ended, for people: "exit status 2", "killed by SIGSEGV". */
static void how_it_ended(const struct run_outcome *o, char *how, size_t len)
{
    if (o->error[0])
        snprintf(how, len, "%s", o->error);
    else if (o->status == RUN_FAILED)
        snprintf(how, len, "exit status %d", o->exit_code);
    else if (o->status == RUN_SIGNALED)
        snprintf(how, len, "killed by SIG%s", sigabbrev_np(o->signal) ? sigabbrev_np(o->signal) : "?");
    else
        snprintf(how, len, "%s", run_status_name(o->status));
}

/* Runs --prepare or --cleanup; returns NULL or an owned message saying how it failed. */
static char *run_helper(struct bench *b, const struct cmdline *c, const char *what)
{
    struct runner_spec spec = {
        .argv = c->argv, .envp = b->session.helper_env, .timeout_s = b->cfg->timeout_s,
        .grace_s = b->cfg->grace_s, .show_output = b->cfg->show_output,
    };
    struct run_outcome o;
    runner_run(&spec, &o);
    char *msg = NULL;
    if (o.status != RUN_OK) {
        char how[300];
        how_it_ended(&o, how, sizeof how);
        msg = xasprintf("%s command failed (%s)%s%s", what, how,
                        o.stderr_tail ? ": " : "", o.stderr_tail ? o.stderr_tail : "");
    }
    free(o.stderr_tail);
    return msg;
}

static void describe_failure(struct bench *b, const struct repetition *rep)
{
    const struct run_outcome *o = &rep->outcome;
    if (rep->prepare_error) {
        progress_error(&b->progress, "  %s", rep->prepare_error);
        return;
    }
    char how[320];
    how_it_ended(o, how, sizeof how);
    progress_error(&b->progress, "  %s: %s", b->what, how);
    if (!b->printed_failure && o->stderr_tail) {
        /* The last lines of its stderr usually say why. */
        const char *t = o->stderr_tail + strlen(o->stderr_tail);
        int lines = 0;
        while (t > o->stderr_tail && lines < 11)
            if (*--t == '\n')
                lines++;
        progress_error(&b->progress, "  last lines of its stderr:\n%s", t == o->stderr_tail ? t : t + 1);
        b->printed_failure = true;
    }
}

/* The measured command itself, with markers and samples, aggregated into rep. */
static void measure_command(struct bench *b, struct repetition *rep)
{
    struct session *s = &b->session;
    struct runner_spec spec = {
        .argv = b->cmd.argv, .envp = s->env, .timeout_s = b->cfg->timeout_s,
        .grace_s = b->cfg->grace_s, .show_output = b->cfg->show_output,
        .tick = b->progress.tty ? tick : NULL, .tick_arg = b, .tick_ms = 100,
        .spawned = session_spawned, .spawned_arg = s,
        .before_reap = session_before_reap, .before_reap_arg = s,
    };
    markers_begin_run(s->markers, &rep->log);
    bool sampling = sampler_start(s->sampler, &rep->samples) == 0;
    runner_run(&spec, &rep->outcome);
    if (sampling)
        sampler_stop(s->sampler);
    markers_end_run(s->markers);
    if (b->live) { /* --serve: a killed run's open spans close; faults and errors are counted */
        live_close_spans(b->live);
        live_add_malformed(b->live, rep->log.malformed);
        live_set_marker_foreign(b->live, markers_foreign(s->markers, NULL));
        live_set_sampler_errors(b->live, sampler_errors(s->sampler));
    }
    stages_aggregate(&rep->log, rep->outcome.start_ns, rep->outcome.wall_ns, &rep->stages);
    if (rep->samples.n && rep->samples.n_series)
        rep->metrics = attrib_run(&rep->samples, rep->outcome.start_ns, rep->outcome.wall_ns,
                                  &rep->stages);
    free(rep->log.ev); /* the aggregate and the interned names are what is kept */
    rep->log.ev = NULL;
    rep->log.n = rep->log.cap = 0;
}

/* One repetition: prepare, the measured command, cleanup. Returns the repetition. */
static struct repetition *one_run(struct bench *b, bool warmup, int number, int of)
{
    struct repetition *rep = result_add_rep(&b->result, warmup);
    if (of > 0)
        snprintf(b->what, sizeof b->what, "%s %d/%d", warmup ? "warm-up" : "run", number, of);
    else
        snprintf(b->what, sizeof b->what, "run %d", number);

    if (b->cfg->prepare) {
        rep->prepare_error = run_helper(b, &b->prepare, "--prepare");
        if (rep->prepare_error) {
            rep->outcome.start_unix_ns = unix_ns();
            rep->outcome.status = RUN_FAILED;
            rep->outcome.exit_code = -1;
            return rep;
        }
    }
    measure_command(b, rep);
    if (b->cfg->cleanup && !runner_interrupted()) {
        char *msg = run_helper(b, &b->cleanup, "--cleanup");
        if (msg) {
            log_warn("run %d: %s", rep->index + 1, msg);
            free(msg);
        }
    }
    return rep;
}

/* Copies what the sampler measures (and what it could not) into the result. */
static void record_sampling(struct sampling_info *info, const struct sampler *s,
                            const struct run_config *cfg)
{
    const char *const *names;
    info->interval_ns = cfg->interval_ns;
    info->adaptive = cfg->interval_adaptive;
    info->n_active = sampler_active(s, &names);
    info->active = xcalloc(info->n_active + 1, sizeof *info->active);
    for (size_t i = 0; i < info->n_active; i++)
        info->active[i] = xstrdup(names[i]);
    info->n_skipped = sampler_skipped(s, &names);
    info->skipped = xcalloc(info->n_skipped + 1, sizeof *info->skipped);
    for (size_t i = 0; i < info->n_skipped; i++)
        info->skipped[i] = xstrdup(names[i]);
}

/* Automatic mode: enough runs for statistics and at least RUN_AUTO_MIN_SECONDS of them. */
static bool auto_done(const struct bench *b, int64_t last_wall_ns)
{
    if (b->measured == 1 && (double)last_wall_ns / 1e9 > RUN_AUTO_LONG_SECONDS)
        return true;
    if (b->measured >= RUN_AUTO_MAX_RUNS)
        return true;
    return b->measured >= RUN_AUTO_MIN_RUNS && (double)b->measured_ns / 1e9 >= RUN_AUTO_MIN_SECONDS;
}

static int auto_estimate(const struct bench *b)
{
    if (b->measured == 0)
        return b->cfg->warmup + RUN_AUTO_MIN_RUNS;
    double mean_s = (double)b->measured_ns / 1e9 / b->measured;
    int want = mean_s > 0 ? (int)ceil(RUN_AUTO_MIN_SECONDS / mean_s) : RUN_AUTO_MAX_RUNS;
    if (want < RUN_AUTO_MIN_RUNS)
        want = RUN_AUTO_MIN_RUNS;
    if (want > RUN_AUTO_MAX_RUNS)
        want = RUN_AUTO_MAX_RUNS;
    return b->cfg->warmup + want;
}

/* Runs everything; returns mlbench's exit status as far as the runs decide it. */
static int repeat(struct bench *b)
{
    const struct run_config *cfg = b->cfg;
    bool any_bad = false;
    b->planned = cfg->warmup + (cfg->runs ? cfg->runs : RUN_AUTO_MIN_RUNS);

    for (int i = 0;; i++) {
        bool warmup = i < cfg->warmup;
        if (!warmup && cfg->runs && b->measured >= cfg->runs)
            break;
        if (runner_interrupted())
            break;
        struct repetition *rep = one_run(b, warmup, warmup ? i + 1 : b->measured + 1,
                                         warmup ? cfg->warmup : cfg->runs);
        const struct run_outcome *o = &rep->outcome;
        b->done++;
        b->sum_wall_ns += o->wall_ns;
        if (!warmup) {
            b->measured++; /* a failed --prepare still uses up a run */
            if (!rep->prepare_error)
                b->measured_ns += o->wall_ns;
        }
        char wall[32];
        progress_line(&b->progress, "%s  %s  %s", b->what,
                      units_duration((double)o->wall_ns, wall, sizeof wall),
                      rep->prepare_error ? "failed" : run_status_name(o->status));
        bool bad = o->status != RUN_OK || rep->prepare_error;
        if (bad) {
            any_bad = true;
            describe_failure(b, rep);
        }
        if (o->status == RUN_INTERRUPTED || runner_interrupted())
            break;
        if (o->error[0] && o->exit_code == 127)
            return 127; /* it will not appear on the next run either */
        if (bad && cfg->fail_fast)
            break;
        if (!warmup && !cfg->runs) {
            if (auto_done(b, o->wall_ns))
                break;
            b->planned = auto_estimate(b);
        }
    }
    return any_bad ? 1 : 0;
}

/* Checks what can be checked before anything runs: the command strings, the store, --nvtx.
 * Returns 0, or 2 after saying what is wrong. */
static int check_input(struct bench *b)
{
    const struct run_config *cfg = b->cfg;
    char err[1024];
    if (cfg->shell) { /* the command's words, joined, are one shell command line */
        size_t len = 1;
        for (int i = 0; i < cfg->argc; i++)
            len += strlen(cfg->argv[i]) + 1;
        b->joined = xcalloc(len, 1);
        for (int i = 0; i < cfg->argc; i++) {
            if (i)
                strcat(b->joined, " ");
            strcat(b->joined, cfg->argv[i]);
        }
        cmdline_split(&b->cmd, "command", b->joined, true, err, sizeof err);
    } else {
        b->cmd.argv = cfg->argv;
    }
    if ((cfg->prepare &&
         cmdline_split(&b->prepare, "--prepare", cfg->prepare, cfg->shell, err, sizeof err)) ||
        (cfg->cleanup &&
         cmdline_split(&b->cleanup, "--cleanup", cfg->cleanup, cfg->shell, err, sizeof err))) {
        log_error("%s", err);
        return 2;
    }

    b->runs_dir = xasprintf("%s/runs", cfg->store);
    int store_ok = fsx_mkdirs(b->runs_dir) == 0 && access(b->runs_dir, W_OK | X_OK) == 0;
    if (!store_ok)
        snprintf(err, sizeof err, "cannot use the result store '%s': %s (choose another with "
                 "--store DIR)", b->runs_dir, strerror(errno));
    /* A store whose index is not ours (or is newer) is refused before anything runs. */
    if (!store_ok || store_check(cfg->store, err, sizeof err) < 0) {
        log_error("%s", err);
        return 2;
    }
    fsx_clean_stale(b->runs_dir, ".tmp.", NULL); /* half-written results of an mlbench that was SIGKILLed */

    if (cfg->nvtx) {
        char *lib = nvtx_library();
        if (!lib) {
            log_error("--nvtx: cannot find libmlbench_nvtx.so beside mlbench (build it, or set "
                      "MLBENCH_NVTX_LIBRARY to its path)");
            return 2;
        }
        const char *other = getenv("NVTX_INJECTION64_PATH");
        if (other && *other && strcmp(other, lib) != 0)
            log_warn("--nvtx replaces NVTX_INJECTION64_PATH=%s (another tool, e.g. nsys?) with "
                     "%s for the command", other, lib);
        b->nvtx_var = xasprintf("NVTX_INJECTION64_PATH=%s", lib);
        free(lib);
    }
    return 0;
}

/* Starts the runner, the session and --serve. Returns 0, or mlbench's exit status. */
static int start(struct bench *b)
{
    const struct run_config *cfg = b->cfg;
    char err[1024];
    struct session_config scfg = {.interval_ns = cfg->interval_ns,
                                  .adaptive = cfg->interval_adaptive, .all_gpus = cfg->all_gpus,
                                  .markers = true, .extra_var = b->nvtx_var};
    if (runner_init(err, sizeof err) < 0 || session_open(&b->session, &scfg, err, sizeof err) < 0) {
        log_error("%s", err);
        return 3;
    }
    record_sampling(&b->result.sampling, b->session.sampler, cfg);
    if (cfg->serve) { /* after runner_init: the server's threads leave the signals to us */
        b->live = live_new();
        live_expect_markers(b->live);
        if (!(b->server = http_server_start(cfg->serve, b->live, err, sizeof err))) {
            log_error("--serve: %s", err);
            return 2;
        }
        markers_set_listener(b->session.markers, live_on_marker, b->live);
        sampler_set_listener(b->session.sampler, live_on_sample, b->live);
        log_info("serving Prometheus metrics at http://%s/metrics", http_server_address(b->server));
    }
    progress_init(&b->progress, cfg->quiet);
    return 0;
}

/* After the runs: the receiver stops, the result is summarised and analysed. */
static void finish(struct bench *b)
{
    struct bench_result *r = &b->result;
    struct session *s = &b->session;
    progress_clear(&b->progress);
    r->events_outside_runs = markers_outside(s->markers);
    r->stop_signal = runner_interrupted();
    if (b->server) { /* the aggregates keep their final state; the server stops after the
                      * result is written (write_result), so nothing it does can cost it */
        markers_set_listener(s->markers, NULL, NULL);
        sampler_set_listener(s->sampler, NULL, NULL);
    }
    session_stop_markers(s);

    r->sampling.errors = sampler_errors(s->sampler);
    r->sampling.cpu_ns = sampler_cpu_ns(s->sampler);
    for (size_t i = 0; i < r->n_reps; i++)
        r->sampling.sampled_ns += r->reps[i].outcome.wall_ns;
    summary_compute(r);
    /* Once, while the sources are open (GPU facts) and before the analysis, which reads them. */
    result_capture_environment(r, s->sampler);
    result_price(r); /* a price file is matched against the environment just captured */
    resources_analyze(r);
    if (!b->cfg->runs && b->measured == 1 && b->measured_ns / 1e9 > RUN_AUTO_LONG_SECONDS)
        summary_warn(&r->summary, "single_run",
                     "one run took over %.0f s, so only one was made: no confidence interval can be "
                     "given; use -r N to repeat anyway", RUN_AUTO_LONG_SECONDS);
}

/* Writes the document to the store and indexes it, else to $TMPDIR; then to --output.
 * Returns 0, or 3 when it could not be written where asked. */
static int write_result(struct bench *b, struct bench_output *out)
{
    char err[1024];
    const char *id = b->result.id;
    if (!out->doc) {
        log_error("cannot build the JSON of result %s (a string is not UTF-8?)", id);
        return 3;
    }
    int status = 0;
    out->path = xasprintf("%s/%s.json", b->runs_dir, id);
    if (result_write_json(out->doc, out->path, err, sizeof err) == 0) {
        if (store_record(b->cfg->store, out->path, out->doc, err, sizeof err) < 0)
            log_warn("%s (the result is in %s; the next mlbench history indexes it)", err, out->path);
    } else {
        /* The store was writable when we started (disk full since?): keep the result anyway. */
        log_error("%s", err);
        status = 3;
        free(out->path);
        const char *tmp = getenv("TMPDIR");
        out->path = xasprintf("%s/mlbench-%s.json", tmp && *tmp ? tmp : "/tmp", id);
        if (result_write_json(out->doc, out->path, err, sizeof err) == 0) {
            log_error("the result was written to %s instead", out->path);
        } else {
            log_error("%s", err);
            free(out->path);
            out->path = NULL;
        }
    }
    if (b->cfg->output && result_write_json(out->doc, b->cfg->output, err, sizeof err) < 0) {
        log_error("%s", err);
        status = 3;
    }
    return status;
}

static void bench_free(struct bench *b)
{
    result_free(&b->result);
    session_close(&b->session); /* after the result: its tables borrow the series definitions */
    live_free(b->live);
    free(b->runs_dir);
    free(b->joined);
    free(b->nvtx_var);
    cmdline_free(&b->prepare);
    cmdline_free(&b->cleanup);
}

int bench_run(const struct run_config *cfg, struct bench_output *out)
{
    struct bench b = {.cfg = cfg};
    memset(out, 0, sizeof *out);
    result_init(&b.result, cfg);
    int status = check_input(&b);
    if (status == 0)
        status = start(&b);
    if (status != 0) {
        http_server_stop(b.server);
        bench_free(&b);
        return status;
    }
    status = repeat(&b);
    finish(&b);
    /* One document for every copy. */
    out->doc = result_to_json(&b.result);
    if (write_result(&b, out) != 0)
        status = 3;
    else if (b.result.stop_signal)
        status = 128 + b.result.stop_signal;
    http_server_stop(b.server);
    bench_free(&b);
    return status;
}

void bench_output_free(struct bench_output *out)
{
    json_decref(out->doc);
    free(out->path);
    memset(out, 0, sizeof *out);
}
