/* session: the repetition loop and the run wiring of `mlbench run` and `mlbench sweep` (see
 * session.h). Measuring one run is measure/runner.c, markers measure/markers.c, the summary
 * result/summary.c. */
#include "session/session.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "live/http_server.h"
#include "live/live.h"
#include "measure/attrib.h"
#include "measure/cmdline.h"
#include "measure/progress.h"
#include "measure/runner.h"
#include "measure/instruments.h"
#include "measure/stages.h"
#include "result/resources.h"
#include "result/result.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/fsx.h"
#include "util/log.h"
#include "util/units.h"
#include "util/xalloc.h"

/* One configuration measured: its command, its result and where its repetition loop stands. */
struct session_point {
    const struct run_config *cfg;
    char *name;            /* for the progress lines ("batch=64"), or NULL */
    struct result result;
    char *joined;          /* --shell: the command's words joined into one line */
    struct cmdline cmd, prepare, cleanup;
    int planned;           /* runs expected, warm-up included (estimate in auto mode) */
    int done;              /* runs finished */
    int64_t sum_wall_ns;   /* of finished runs */
    int64_t measured_ns;   /* of finished measured runs */
    int measured;
    bool any_bad;          /* a run did not succeed */
    bool stopped;          /* no more runs: fail-fast, not found, interrupted, session_stop */
    int not_found;         /* 127 when the command was not found */
};

/* The measuring session the points share: one runner, one marker receiver and sampler, one
 * --serve, one progress line. */
struct session {
    const struct run_config *cfg; /* the common settings: sampling, --all-gpus, --nvtx,
                                   * --ranks-listen */
    struct session_options opts;  /* store, -o, --serve, --quiet, the price (a copy) */
    struct instruments inst;
    struct live_metrics *live;     /* --serve */
    struct http_server *server;
    struct progress progress;
    char *nvtx_var;        /* "NVTX_INJECTION64_PATH=..." for the command, or NULL */
    struct session_store where; /* the store, its runs/ directory, the shared store's name */
    struct session_point **points;
    size_t n_points;
    struct session_point *current; /* the point running now, for the status line */
    struct session_companion *companion; /* of the run being made (session_step_with), or NULL */
    bool printed_failure;  /* the first failure's stderr was shown (once per session: a sweep
                            * of probes that run out of memory would repeat it for each) */
    bool markers_stopped;
    uint64_t outside;      /* events outside runs when the receiver stopped */
    char what[160];        /* "batch=64: run 3/10" for the status line */
};

/* The NVTX injection library: $MLBENCH_NVTX_LIBRARY, else beside this binary in the build tree
 * (lib/nvtx/), else installed: lib/mlbench/ relative to the binary (MLBENCH_PKGLIBDIR_FROM_BINDIR,
 * so that a tree installed anywhere works). Returns an owned path, or NULL. */
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
    const char *rel[] = {"lib/nvtx/libmlbench_nvtx.so",
                         MLBENCH_PKGLIBDIR_FROM_BINDIR "/libmlbench_nvtx.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char *path = xasprintf("%s/%s", exe, rel[i]);
        if (access(path, R_OK) == 0)
            return path;
        free(path);
    }
    return NULL;
}

static void tick(void *arg, int64_t elapsed_ns)
{
    struct session *s = arg;
    const struct session_point *p = s->current;
    char stage[128];
    markers_current_stage(s->inst.markers, stage, sizeof stage);
    int64_t eta = -1;
    if (p && p->done > 0) {
        int64_t mean = p->sum_wall_ns / p->done;
        eta = (int64_t)(p->planned - p->done) * mean - elapsed_ns;
        if (eta < 0)
            eta = 0;
    }
    progress_status(&s->progress, s->what, stage, elapsed_ns, eta);
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

void session_describe_outcome(const struct run_outcome *o, char *how, size_t len)
{
    how_it_ended(o, how, len);
}

/* Runs --prepare or --cleanup; returns NULL or an owned message saying how it failed. */
static char *run_helper(struct session *s, const struct session_point *p, const struct cmdline *c,
                        const char *what)
{
    struct runner_spec spec = {
        .argv = c->argv, .envp = s->inst.helper_env, .timeout_s = p->cfg->timeout_s,
        .grace_s = p->cfg->grace_s, .show_output = p->cfg->show_output,
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

static void describe_failure(struct session *s, const struct repetition *rep)
{
    const struct run_outcome *o = &rep->outcome;
    if (rep->prepare_error) {
        progress_error(&s->progress, "  %s", rep->prepare_error);
        return;
    }
    char how[320];
    how_it_ended(o, how, sizeof how);
    progress_error(&s->progress, "  %s: %s", s->what, how);
    if (!s->printed_failure && o->stderr_tail) {
        /* The last lines of its stderr usually say why. */
        const char *t = o->stderr_tail + strlen(o->stderr_tail);
        int lines = 0;
        while (t > o->stderr_tail && lines < 11)
            if (*--t == '\n')
                lines++;
        progress_error(&s->progress, "  last lines of its stderr:\n%s", t == o->stderr_tail ? t : t + 1);
        s->printed_failure = true;
    }
}

/* A companion (session.h) on its thread: done is an eventfd written when it returns, which the
 * runner takes as the request to stop the command. */
struct companion_run {
    struct session_companion *c;
    struct instruments *inst;
    pthread_t thread;
    bool started;
    volatile int stop;
    int done_fd;
    int rc;
};

static void *companion_main(void *arg)
{
    struct companion_run *cr = arg;
    cr->rc = cr->c->run(cr->c->arg, cr->c->pid, &cr->stop);
    uint64_t one = 1;
    ssize_t w = write(cr->done_fd, &one, sizeof one);
    (void)w;
    return NULL;
}

static void companion_start(struct companion_run *cr)
{
    cr->started = pthread_create(&cr->thread, NULL, companion_main, cr) == 0;
    if (!cr->started) {
        cr->rc = 1;
        uint64_t one = 1;
        ssize_t w = write(cr->done_fd, &one, sizeof one);
        (void)w;
    }
}

static void companion_spawned(void *arg, pid_t pid)
{
    struct companion_run *cr = arg;
    instruments_spawned(cr->inst, pid);
    cr->c->pid = pid;
    companion_start(cr);
}

static void companion_interrupt(void *arg)
{
    ((struct companion_run *)arg)->stop = 1;
}

/* Without a command: the companion is the run, measured from its start to its end; mlbench's
 * signals stop it. */
static void companion_alone(struct companion_run *cr, struct run_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->start_unix_ns = unix_ns();
    o->start_ns = mono_ns();
    companion_start(cr);
    struct pollfd pfd = {.fd = cr->done_fd, .events = POLLIN};
    while (poll(&pfd, 1, 50) == 0 || !(pfd.revents & POLLIN))
        if (runner_interrupted())
            cr->stop = 1;
    o->wall_ns = mono_ns() - o->start_ns;
    int sig = runner_interrupted();
    o->status = sig ? RUN_INTERRUPTED : cr->rc == 0 ? RUN_OK : RUN_FAILED;
    o->stop_signal = sig;
    o->exit_code = sig ? -1 : cr->rc;
}

/* The measured command itself (or, with a companion and no command, the companion), with
 * markers and samples, aggregated into rep. */
static void measure_command(struct session *s, struct session_point *p, struct repetition *rep,
                            struct session_companion *companion)
{
    struct instruments *inst = &s->inst;
    struct runner_spec spec = {
        .argv = p->cmd.argv, .envp = inst->env, .timeout_s = p->cfg->timeout_s,
        .grace_s = p->cfg->grace_s, .show_output = p->cfg->show_output,
        .tick = s->progress.tty ? tick : NULL, .tick_arg = s, .tick_ms = 100,
        .spawned = instruments_spawned, .spawned_arg = inst,
        .before_reap = instruments_before_reap, .before_reap_arg = inst,
    };
    struct companion_run cr = {.c = companion, .inst = inst, .done_fd = -1};
    if (companion) {
        cr.done_fd = eventfd(0, EFD_CLOEXEC);
        spec.spawned = companion_spawned, spec.spawned_arg = &cr;
        spec.stop_fd = cr.done_fd;
        spec.interrupt = companion_interrupt, spec.interrupt_arg = &cr;
    }
    markers_begin_run(inst->markers, &rep->log);
    bool sampling = sampler_start(inst->sampler, &rep->samples) == 0;
    if (companion && cr.done_fd < 0) {
        memset(&rep->outcome, 0, sizeof rep->outcome);
        rep->outcome.status = RUN_FAILED;
        snprintf(rep->outcome.error, sizeof rep->outcome.error, "cannot create an eventfd: %s",
                 strerror(errno));
    } else if (companion && p->cfg->argc == 0) {
        companion_alone(&cr, &rep->outcome);
    } else {
        runner_run(&spec, &rep->outcome);
    }
    if (cr.started) { /* the command ended: so does its companion */
        cr.stop = 1;
        pthread_join(cr.thread, NULL);
    }
    if (cr.done_fd >= 0)
        close(cr.done_fd);
    if (sampling)
        sampler_stop(inst->sampler);
    markers_end_run(inst->markers);
    if (s->live) { /* --serve: a killed run's open spans close; faults and errors are counted */
        live_close_spans(s->live);
        live_add_malformed(s->live, rep->log.malformed);
        live_set_marker_foreign(s->live, markers_foreign(inst->markers, NULL));
        live_set_sampler_errors(s->live, sampler_errors(inst->sampler));
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
static struct repetition *one_run(struct session *s, struct session_point *p, bool warmup,
                                  int number, int of)
{
    struct repetition *rep = result_add_rep(&p->result, warmup);
    const char *kind = warmup ? "warm-up" : "run";
    /* A point's name comes from the command line: shown cut to keep the line readable. */
    char name[72] = "";
    if (p->name)
        snprintf(name, sizeof name, "%.60s%s: ", p->name, strlen(p->name) > 60 ? "..." : "");
    if (of > 0)
        snprintf(s->what, sizeof s->what, "%s%s %d/%d", name, kind, number, of);
    else
        snprintf(s->what, sizeof s->what, "%s%s %d", name, kind, number);
    s->current = p;

    if (p->cfg->prepare) {
        rep->prepare_error = run_helper(s, p, &p->prepare, "--prepare");
        if (rep->prepare_error) {
            rep->outcome.start_unix_ns = unix_ns();
            rep->outcome.status = RUN_FAILED;
            rep->outcome.exit_code = -1;
            return rep;
        }
    }
    measure_command(s, p, rep, s->companion);
    if (p->cfg->cleanup && !runner_interrupted()) {
        char *msg = run_helper(s, p, &p->cleanup, "--cleanup");
        if (msg) {
            log_warn("%srun %d: %s", name, rep->index + 1, msg);
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
static bool auto_done(const struct session_point *p, int64_t last_wall_ns)
{
    if (p->measured == 1 && (double)last_wall_ns / 1e9 > RUN_AUTO_LONG_SECONDS)
        return true;
    if (p->measured >= RUN_AUTO_MAX_RUNS)
        return true;
    return p->measured >= RUN_AUTO_MIN_RUNS && (double)p->measured_ns / 1e9 >= RUN_AUTO_MIN_SECONDS;
}

static int auto_estimate(const struct session_point *p)
{
    if (p->measured == 0)
        return p->cfg->warmup + RUN_AUTO_MIN_RUNS;
    double mean_s = (double)p->measured_ns / 1e9 / p->measured;
    int want = mean_s > 0 ? (int)ceil(RUN_AUTO_MIN_SECONDS / mean_s) : RUN_AUTO_MAX_RUNS;
    if (want < RUN_AUTO_MIN_RUNS)
        want = RUN_AUTO_MIN_RUNS;
    if (want > RUN_AUTO_MAX_RUNS)
        want = RUN_AUTO_MAX_RUNS;
    return p->cfg->warmup + want;
}

bool session_done(const struct session *s, size_t i)
{
    const struct session_point *p = s->points[i];
    return p->stopped || runner_interrupted() || (p->cfg->runs && p->measured >= p->cfg->runs);
}

void session_stop(struct session *s, size_t i)
{
    s->points[i]->stopped = true;
}

/* Runs one repetition of p and books it; returns it. */
static struct repetition *book_run(struct session *s, struct session_point *p, bool warmup)
{
    const struct run_config *cfg = p->cfg;
    struct repetition *rep = one_run(s, p, warmup, warmup ? p->done + 1 : p->measured + 1,
                                     warmup ? cfg->warmup : cfg->runs);
    const struct run_outcome *o = &rep->outcome;
    p->done++;
    p->sum_wall_ns += o->wall_ns;
    if (!warmup) {
        p->measured++; /* a failed --prepare still uses up a run */
        if (!rep->prepare_error)
            p->measured_ns += o->wall_ns;
    }
    char wall[32];
    progress_line(&s->progress, "%s  %s  %s", s->what,
                  units_duration((double)o->wall_ns, wall, sizeof wall),
                  rep->prepare_error ? "failed" : run_status_name(o->status));
    bool bad = o->status != RUN_OK || rep->prepare_error;
    if (bad) {
        p->any_bad = true;
        describe_failure(s, rep);
    }
    if (o->status == RUN_INTERRUPTED || runner_interrupted())
        p->stopped = true;
    else if (o->error[0] && o->exit_code == 127)
        p->stopped = true, p->not_found = 127; /* it will not appear on the next run either */
    else if (bad && cfg->fail_fast)
        p->stopped = true;
    else if (!warmup && !cfg->runs) {
        if (auto_done(p, o->wall_ns))
            p->stopped = true;
        else
            p->planned = auto_estimate(p);
    }
    return rep;
}

const struct repetition *session_step(struct session *s, size_t i)
{
    struct session_point *p = s->points[i];
    struct repetition *rep = NULL;
    /* The warm-up runs come right before the point's first measured run. */
    while (!session_done(s, i) && p->done < p->cfg->warmup)
        rep = book_run(s, p, true);
    if (!session_done(s, i))
        rep = book_run(s, p, false);
    return rep;
}

const struct repetition *session_step_with(struct session *s, size_t i, struct session_companion *c)
{
    struct session_point *p = s->points[i];
    if (session_done(s, i))
        return NULL;
    s->companion = c;
    struct repetition *rep = book_run(s, p, false);
    s->companion = NULL;
    return rep;
}

const struct result *session_result(const struct session *s, size_t i)
{
    return &s->points[i]->result;
}

/* Checks the command strings of a point. Returns 0, or 2 after saying what is wrong. */
static int check_command(struct session_point *p)
{
    const struct run_config *cfg = p->cfg;
    char err[1024];
    if (cfg->shell) { /* the command's words, joined, are one shell command line */
        size_t len = 1;
        for (int i = 0; i < cfg->argc; i++)
            len += strlen(cfg->argv[i]) + 1;
        p->joined = xcalloc(len, 1);
        for (int i = 0; i < cfg->argc; i++) {
            if (i)
                strcat(p->joined, " ");
            strcat(p->joined, cfg->argv[i]);
        }
        cmdline_split(&p->cmd, "command", p->joined, true, err, sizeof err);
    } else {
        p->cmd.argv = cfg->argv;
    }
    if ((cfg->prepare &&
         cmdline_split(&p->prepare, "--prepare", cfg->prepare, cfg->shell, err, sizeof err)) ||
        (cfg->cleanup &&
         cmdline_split(&p->cleanup, "--cleanup", cfg->cleanup, cfg->shell, err, sizeof err))) {
        log_error("%s", err);
        return 2;
    }
    return 0;
}

int session_store_open(struct session_store *s, const char *store)
{
    char err[1024];
    memset(s, 0, sizeof *s);
    s->store = store;
    int kind = store_where(store, &s->shared, err, sizeof err);
    if (kind < 0) {
        log_error("%s", err);
        return 2;
    }
    if (kind == 1) {
        /* Results that cannot reach it are kept in the local store (STORE_DEFAULT_DIR, else
         * $TMPDIR): a run is not refused for a server that is away. */
        s->runs_dir = xasprintf("%s/%s", STORE_DEFAULT_DIR, STORE_RUNS_DIR);
        if (store_check(store, err, sizeof err) < 0) {
            log_error("%s", err);
            if (store_exit_status() == 2)
                return 3;
            log_warn("the run goes on: its result will be kept locally, to be sent with "
                     "mlbench store push");
        }
        return 0;
    }
    free(s->shared);
    s->shared = NULL;
    s->runs_dir = xasprintf("%s/runs", store);
    int store_ok = fsx_mkdirs(s->runs_dir) == 0 && access(s->runs_dir, W_OK | X_OK) == 0;
    if (!store_ok)
        snprintf(err, sizeof err, "cannot use the result store '%s': %s (choose another with "
                 "--store DIR)", s->runs_dir, strerror(errno));
    /* A store whose index is not ours (or is newer) is refused before anything runs. */
    if (!store_ok || store_check(store, err, sizeof err) < 0) {
        log_error("%s", err);
        return 3;
    }
    fsx_clean_stale(s->runs_dir, ".tmp.", NULL); /* half-written results of an mlbench that was SIGKILLed */
    return 0;
}

void session_store_free(struct session_store *s)
{
    free(s->runs_dir);
    free(s->shared);
    memset(s, 0, sizeof *s);
}

static int check_nvtx(struct session *s);

/* Checks the store and --nvtx before anything runs. Returns 0, or 2 after saying what is
 * wrong. */
static int check_input(struct session *s)
{
    if (session_store_open(&s->where, s->opts.store) != 0)
        return 2;
    return check_nvtx(s);
}

/* Checks --nvtx. Returns 0, or 2 after saying what is wrong. */
static int check_nvtx(struct session *s)
{
    const struct run_config *cfg = s->cfg;
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
        s->nvtx_var = xasprintf("NVTX_INJECTION64_PATH=%s", lib);
        free(lib);
    }
    return 0;
}

/* Starts the runner, the session and --serve. Returns 0, or mlbench's exit status. */
static int start(struct session *s)
{
    const struct run_config *cfg = s->cfg;
    char err[1024];
    struct instruments_config scfg = {.interval_ns = cfg->interval_ns,
                                  .adaptive = cfg->interval_adaptive, .all_gpus = cfg->all_gpus,
                                  .markers = true, .extra_var = s->nvtx_var,
                                  .rank_listen = cfg->ranks_listen};
    int rc = -1;
    if (runner_init(err, sizeof err) < 0 ||
        (rc = instruments_open(&s->inst, &scfg, err, sizeof err)) < 0) {
        log_error("%s", err);
        return rc == -2 ? 2 : 3;
    }
    if (s->opts.serve) { /* after runner_init: the server's threads leave the signals to us */
        s->live = live_new();
        live_expect_markers(s->live);
        if (!(s->server = http_server_start(s->opts.serve, s->live, err, sizeof err))) {
            log_error("--serve: %s", err);
            return 2;
        }
        markers_set_listener(s->inst.markers, live_on_marker, s->live);
        sampler_set_listener(s->inst.sampler, live_on_sample, s->live);
        log_info("serving Prometheus metrics at http://%s/metrics", http_server_address(s->server));
    }
    progress_init(&s->progress, s->opts.quiet);
    return 0;
}

int session_open(const struct run_config *cfg, const struct session_options *opts,
                 struct session **out)
{
    struct session *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->opts = *opts;
    *out = s;
    int status = check_input(s);
    if (status == 0)
        status = start(s);
    return status;
}

int session_add(struct session *s, const struct run_config *cfg, const char *name)
{
    struct session_point *p = xcalloc(1, sizeof *p);
    p->cfg = cfg;
    p->name = name ? xstrdup(name) : NULL;
    p->planned = cfg->warmup + (cfg->runs ? cfg->runs : RUN_AUTO_MIN_RUNS);
    result_init(&p->result, cfg);
    record_sampling(&p->result.sampling, s->inst.sampler, cfg);
    s->points = xreallocarray(s->points, s->n_points + 1, sizeof *s->points);
    s->points[s->n_points++] = p;
    return check_command(p) == 0 ? (int)(s->n_points - 1) : -1;
}

/* Stops the marker receiver (and --serve's listeners) once: no run is left. */
static void stop_markers(struct session *s)
{
    if (s->markers_stopped)
        return;
    s->markers_stopped = true;
    s->outside = s->inst.markers ? markers_outside(s->inst.markers) : 0;
    progress_clear(&s->progress);
    if (s->server) { /* the aggregates keep their final state; the server stops after the
                      * results are written (session_close), so nothing it does can cost them */
        markers_set_listener(s->inst.markers, NULL, NULL);
        sampler_set_listener(s->inst.sampler, NULL, NULL);
    }
    instruments_stop_markers(&s->inst);
}

/* After the runs of a point: its result is summarised and analysed. */
static void finish(struct session *s, struct session_point *p)
{
    struct result *r = &p->result;
    struct instruments *inst = &s->inst;
    progress_clear(&s->progress);
    r->events_outside_runs = s->markers_stopped ? s->outside : markers_outside(inst->markers);
    r->stop_signal = runner_interrupted();
    r->sampling.errors = sampler_errors(inst->sampler);
    r->sampling.cpu_ns = sampler_cpu_ns(inst->sampler);
    for (size_t i = 0; i < r->n_reps; i++)
        r->sampling.sampled_ns += r->reps[i].outcome.wall_ns;
    /* Once, while the sources are open (GPU facts). The capture reads the sampler, the config
     * and the machine, nothing of the summary. */
    const struct machine_facts *machine = result_capture_environment(r, inst->sampler);
    summary_compute(r, machine);
    /* After the summary, whose warnings ("unpriced") summary_compute would clear. */
    result_price(r, s->opts.price, machine);
    resources_analyze(r, machine);
    if (!p->cfg->runs && p->measured == 1 && p->measured_ns / 1e9 > RUN_AUTO_LONG_SECONDS)
        summary_warn(&r->summary, "single_run",
                     "one run took over %.0f s, so only one was made: no confidence interval can be "
                     "given; use -r N to repeat anyway", RUN_AUTO_LONG_SECONDS);
}

int session_store_write(const struct session_store *s, const char *id, const char *output,
                      struct session_output *out)
{
    char err[1024];
    if (!out->doc) {
        log_error("cannot build the JSON of result %s (a string is not UTF-8?)", id);
        return 3;
    }
    int status = 0;
    const char *store = s->store;
    if (s->shared) {
        if (store_record(store, NULL, out->doc, err, sizeof err) == 0) {
            out->path = xstrdup(s->shared);
            goto output;
        }
        /* kept in the local store, to be pushed: nothing is lost to a server that is away */
        log_error("%s", err);
        status = 3;
        store = STORE_DEFAULT_DIR;
        fsx_mkdirs(s->runs_dir);
    }
    out->path = xasprintf("%s/%s.json", s->runs_dir, id);
    if (result_write_json(out->doc, out->path, err, sizeof err) == 0) {
        if (store_record(store, out->path, out->doc, err, sizeof err) < 0)
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
    if (s->shared && out->path)
        log_error("the result is kept in %s: send it to the shared store later with mlbench "
                  "store push TARGET %s (TARGET: the --store given, %s)", out->path, out->path,
                  s->shared);
output:
    if (output && result_write_json(out->doc, output, err, sizeof err) < 0) {
        log_error("%s", err);
        status = 3;
    }
    return status;
}

int session_finish(struct session *s, size_t i, json_t *extra, struct session_output *out)
{
    struct session_point *p = s->points[i];
    memset(out, 0, sizeof *out);
    finish(s, p);
    /* One document for every copy. */
    out->doc = result_to_json(&p->result);
    if (out->doc && extra)
        json_object_update(out->doc, extra);
    int status = p->not_found ? p->not_found : p->any_bad ? 1 : 0;
    if (session_store_write(&s->where, p->result.id, s->opts.output, out) != 0)
        status = 3;
    else if (p->result.stop_signal)
        status = 128 + p->result.stop_signal;
    return status;
}

static void point_free(struct session_point *p)
{
    result_free(&p->result);
    free(p->name);
    free(p->joined);
    cmdline_free(&p->prepare);
    cmdline_free(&p->cleanup);
    free(p);
}

struct live_metrics *session_live(struct session *s)
{
    return s->live;
}

void session_close(struct session *s)
{
    if (!s)
        return;
    http_server_stop(s->server);
    stop_markers(s);
    /* The results before the session: their tables borrow the series definitions. */
    for (size_t i = 0; i < s->n_points; i++)
        point_free(s->points[i]);
    free(s->points);
    instruments_close(&s->inst);
    live_free(s->live);
    session_store_free(&s->where);
    free(s->nvtx_var);
    free(s);
}

void session_end_runs(struct session *s)
{
    stop_markers(s);
}

int session_run(const struct run_config *cfg, const struct session_options *opts,
                struct session_output *out)
{
    struct session *s;
    memset(out, 0, sizeof *out);
    int status = session_open(cfg, opts, &s);
    if (status == 0 && session_add(s, cfg, NULL) < 0)
        status = 2;
    if (status != 0) {
        session_close(s);
        return status;
    }
    while (!session_done(s, 0))
        session_step(s, 0);
    session_end_runs(s);
    status = session_finish(s, 0, NULL, out);
    session_close(s);
    return status;
}

void session_output_free(struct session_output *out)
{
    json_decref(out->doc);
    free(out->path);
    memset(out, 0, sizeof *out);
}
