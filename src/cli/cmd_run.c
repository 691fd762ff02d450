/* cmd_run: `mlbench run`: repeat a command under measurement, summarise, write the result.
 * The repetition policy (warm-up, fixed or automatic count) lives here; measuring one run is
 * runner.c, markers are markers.c, statistics summary.c. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "cli/commands.h"
#include "cli/workload_path.h"
#include "cli/run_options.h"
#include "cli/summary_text.h"
#include "live/http_server.h"
#include "live/live.h"
#include "util/log.h"
#include "measure/markers.h"
#include "measure/progress.h"
#include "result/resources.h"
#include "result/result.h"
#include "measure/runner.h"
#include "measure/sampler.h"
#include "util/units.h"
#include "measure/workflow.h"
#include "util/xalloc.h"
#include "store/store.h"

extern char **environ;

/* A command line given as one string (--prepare, --cleanup, or the command with --shell). */
struct argv_words {
    wordexp_t we;
    char *sh[4];
    char **argv;
    bool expanded;
};

/* With --shell the string goes to /bin/sh -c; otherwise it is split into words like the shell
 * would, but with command substitution refused, so no shell ever runs it. */
static int words_from_string(struct argv_words *w, const char *what, const char *s, bool shell,
                             char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (shell) {
        w->sh[0] = "/bin/sh";
        w->sh[1] = "-c";
        w->sh[2] = (char *)s;
        w->argv = w->sh;
        return 0;
    }
    int rc = wordexp(s, &w->we, WRDE_NOCMD);
    if (rc == 0 && w->we.we_wordc > 0) {
        w->argv = w->we.we_wordv;
        w->expanded = true;
        return 0;
    }
    if (rc == 0 || rc == WRDE_NOSPACE)
        wordfree(&w->we);
    snprintf(err, errlen, "%s '%s' %s", what, s,
             rc == WRDE_CMDSUB  ? "uses command substitution: add --shell to run it through a shell"
             : rc == WRDE_BADCHAR ? "holds a shell operator (| & ; < > ( ) { }): add --shell"
             : rc == WRDE_SYNTAX ? "has a syntax error (unbalanced quotes?)"
             : rc == 0           ? "has no words: give a command"
                                 : "could not be split into words (out of memory)");
    return -1;
}

static void words_free(struct argv_words *w)
{
    if (w->expanded)
        wordfree(&w->we);
}

/* Our environment without MLBENCH_MARKER_SOCKET, plus the NULL-terminated extra variables
 * (the workload gets the socket; --prepare/--cleanup must not, so they cannot pollute a run's
 * events). A variable in extra replaces ours of the same name. */
static char **child_env(char *const *extra)
{
    size_t n = 0, n_extra = 0;
    while (environ[n])
        n++;
    while (extra[n_extra])
        n_extra++;
    char **env = xcalloc(n + n_extra + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = strncmp(environ[i], "MLBENCH_MARKER_SOCKET=", 22) == 0;
        for (size_t j = 0; j < n_extra && !replaced; j++) {
            size_t len = strcspn(extra[j], "=") + 1;
            replaced = strncmp(environ[i], extra[j], len) == 0;
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++)
        env[k++] = extra[j];
    return env;
}

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

struct loop {
    const struct run_config *cfg;
    struct bench_result result;
    struct marker_receiver *markers;
    struct sampler *sampler;
    struct live_metrics *live;     /* --serve */
    struct http_server *server;
    struct progress progress;
    char **env, **env_helper;
    char *socket_var;      /* "MLBENCH_MARKER_SOCKET=..." in env */
    char *nvtx_var;        /* "NVTX_INJECTION64_PATH=..." in env, or NULL */
    struct argv_words cmd, prepare, cleanup;
    int planned;           /* total runs expected, warm-up included (estimate in auto mode) */
    int done;              /* runs finished */
    int64_t sum_wall_ns;   /* of finished runs */
    int64_t measured_ns;   /* of finished measured runs */
    int measured;
    bool printed_failure;  /* the first failure's details were shown */
    char what[48];         /* "run 3/10" for the status line */
};

static void tick(void *arg, int64_t elapsed_ns)
{
    struct loop *l = arg;
    char stage[128];
    markers_current_stage(l->markers, stage, sizeof stage);
    int64_t eta = -1;
    if (l->done > 0) {
        int64_t mean = l->sum_wall_ns / l->done;
        eta = (int64_t)(l->planned - l->done) * mean - elapsed_ns;
        if (eta < 0)
            eta = 0;
    }
    progress_status(&l->progress, l->what, stage, elapsed_ns, eta);
}

/* The command started: the sampler follows its process tree from now on. */
static void started(void *arg, pid_t pid)
{
    sampler_set_leader(arg, pid);
}

/* Runs --prepare or --cleanup; returns NULL or an owned message saying how it failed. */
static char *run_helper(struct loop *l, const struct argv_words *w, const char *what)
{
    struct runner_spec spec = {
        .argv = w->argv, .envp = l->env_helper, .timeout_s = l->cfg->timeout_s,
        .grace_s = l->cfg->grace_s, .show_output = l->cfg->show_output,
    };
    struct run_outcome o;
    runner_run(&spec, &o);
    char *msg = NULL;
    if (o.status != RUN_OK) {
        char how[300];
        if (o.error[0])
            snprintf(how, sizeof how, "%s", o.error);
        else if (o.status == RUN_FAILED)
            snprintf(how, sizeof how, "exit status %d", o.exit_code);
        else
            snprintf(how, sizeof how, "%s", run_status_name(o.status));
        msg = xasprintf("%s command failed (%s)%s%s", what, how,
                        o.stderr_tail ? ": " : "", o.stderr_tail ? o.stderr_tail : "");
    }
    free(o.stderr_tail);
    return msg;
}

static void describe_failure(struct loop *l, const struct repetition *rep)
{
    const struct run_outcome *o = &rep->outcome;
    char how[320];
    if (rep->prepare_error) {
        progress_line(&l->progress, "  %s", rep->prepare_error);
        return;
    }
    if (o->error[0])
        snprintf(how, sizeof how, "%s", o->error);
    else if (o->status == RUN_FAILED)
        snprintf(how, sizeof how, "exit status %d", o->exit_code);
    else if (o->status == RUN_SIGNALED)
        snprintf(how, sizeof how, "killed by SIG%s", sigabbrev_np(o->signal) ? sigabbrev_np(o->signal) : "?");
    else
        snprintf(how, sizeof how, "%s", run_status_name(o->status));
    progress_line(&l->progress, "  %s: %s", l->what, how);
    if (!l->printed_failure && o->stderr_tail) {
        /* The last lines of its stderr usually say why. */
        const char *t = o->stderr_tail + strlen(o->stderr_tail);
        int lines = 0;
        while (t > o->stderr_tail && lines < 11)
            if (*--t == '\n')
                lines++;
        progress_line(&l->progress, "  last lines of its stderr:\n%s", t == o->stderr_tail ? t : t + 1);
        l->printed_failure = true;
    }
}

/* One repetition: prepare, the measured command, cleanup. Returns the repetition. */
static struct repetition *one_run(struct loop *l, bool warmup, int number, int of)
{
    struct repetition *rep = result_add_rep(&l->result, warmup);
    if (of > 0)
        snprintf(l->what, sizeof l->what, "%s %d/%d", warmup ? "warm-up" : "run", number, of);
    else
        snprintf(l->what, sizeof l->what, "run %d", number);

    if (l->cfg->prepare) {
        rep->prepare_error = run_helper(l, &l->prepare, "--prepare");
        if (rep->prepare_error) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            rep->outcome.start_unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
            rep->outcome.status = RUN_FAILED;
            rep->outcome.exit_code = -1;
            return rep;
        }
    }
    struct runner_spec spec = {
        .argv = l->cmd.argv, .envp = l->env, .timeout_s = l->cfg->timeout_s,
        .grace_s = l->cfg->grace_s, .show_output = l->cfg->show_output,
        .tick = l->progress.tty ? tick : NULL, .tick_arg = l, .tick_ms = 100,
    };
    spec.spawned = started;
    spec.spawned_arg = l->sampler;
    markers_begin_run(l->markers, &rep->log);
    bool sampling = sampler_start(l->sampler, &rep->samples) == 0;
    runner_run(&spec, &rep->outcome);
    if (sampling)
        sampler_stop(l->sampler);
    markers_end_run(l->markers);
    if (l->live) { /* --serve: a killed run's open spans close; faults and errors are counted */
        live_close_spans(l->live);
        live_add_malformed(l->live, rep->log.malformed);
        live_set_sampler_errors(l->live, sampler_errors(l->sampler));
    }
    stages_aggregate(&rep->log, rep->outcome.start_ns, rep->outcome.wall_ns, &rep->stages);
    if (rep->samples.n && rep->samples.n_series)
        rep->metrics = attrib_run(&rep->samples, rep->outcome.start_ns, rep->outcome.wall_ns,
                                  &rep->stages);
    free(rep->log.ev); /* the aggregate and the interned names are what is kept */
    rep->log.ev = NULL;
    rep->log.n = rep->log.cap = 0;

    if (l->cfg->cleanup && !runner_interrupted()) {
        char *msg = run_helper(l, &l->cleanup, "--cleanup");
        if (msg) {
            log_warn("run %d: %s", rep->index + 1, msg);
            free(msg);
        }
    }
    return rep;
}

/* Copies what the sampler measures (and what it could not) into the result. */
static void record_sampling(struct sampling_info *info, const struct sampler *s, int64_t interval_ns)
{
    const char *const *names;
    info->interval_ns = interval_ns;
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
static bool auto_done(const struct loop *l, int64_t last_wall_ns)
{
    if (l->measured == 1 && (double)last_wall_ns / 1e9 > RUN_AUTO_LONG_SECONDS)
        return true;
    if (l->measured >= RUN_AUTO_MAX_RUNS)
        return true;
    return l->measured >= RUN_AUTO_MIN_RUNS && (double)l->measured_ns / 1e9 >= RUN_AUTO_MIN_SECONDS;
}

static int auto_estimate(const struct loop *l)
{
    if (l->measured == 0)
        return l->cfg->warmup + RUN_AUTO_MIN_RUNS;
    double mean_s = (double)l->measured_ns / 1e9 / l->measured;
    int want = mean_s > 0 ? (int)ceil(RUN_AUTO_MIN_SECONDS / mean_s) : RUN_AUTO_MAX_RUNS;
    if (want < RUN_AUTO_MIN_RUNS)
        want = RUN_AUTO_MIN_RUNS;
    if (want > RUN_AUTO_MAX_RUNS)
        want = RUN_AUTO_MAX_RUNS;
    return l->cfg->warmup + want;
}

/* Runs everything; returns mlbench's exit status as far as the runs decide it. */
static int repeat(struct loop *l)
{
    const struct run_config *cfg = l->cfg;
    bool any_bad = false;
    l->planned = cfg->warmup + (cfg->runs ? cfg->runs : RUN_AUTO_MIN_RUNS);

    for (int i = 0;; i++) {
        bool warmup = i < cfg->warmup;
        if (!warmup) {
            if (cfg->runs && l->measured >= cfg->runs)
                break;
        }
        if (runner_interrupted())
            break;
        struct repetition *rep = one_run(l, warmup, warmup ? i + 1 : l->measured + 1,
                                         warmup ? cfg->warmup : cfg->runs);
        const struct run_outcome *o = &rep->outcome;
        l->done++;
        l->sum_wall_ns += o->wall_ns;
        if (!warmup && !rep->prepare_error) {
            l->measured++;
            l->measured_ns += o->wall_ns;
        } else if (!warmup) {
            l->measured++; /* a failed --prepare still uses up a run */
        }
        char wall[32];
        progress_line(&l->progress, "%s  %s  %s", l->what,
                      units_duration((double)o->wall_ns, wall, sizeof wall),
                      rep->prepare_error ? "failed" : run_status_name(o->status));
        bool bad = o->status != RUN_OK || rep->prepare_error;
        if (bad) {
            any_bad = true;
            describe_failure(l, rep);
        }
        if (o->status == RUN_INTERRUPTED || runner_interrupted())
            break;
        if (o->error[0] && o->exit_code == 127)
            return 127; /* it will not appear on the next run either */
        if (bad && cfg->fail_fast)
            break;
        if (!warmup && !cfg->runs) {
            if (auto_done(l, o->wall_ns))
                break;
            l->planned = auto_estimate(l);
        }
    }
    return any_bad ? 1 : 0;
}

/* Everything after option parsing: repeat, summarise, write, print. Returns the exit status. */
static int measure(struct run_config cfg)
{
    char err[1024];
    struct loop l = {.cfg = &cfg};
    char *joined = NULL;
    if (cfg.shell) { /* the command's words, joined, are one shell command line */
        size_t len = 1;
        for (int i = 0; i < cfg.argc; i++)
            len += strlen(cfg.argv[i]) + 1;
        joined = xcalloc(len, 1);
        for (int i = 0; i < cfg.argc; i++) {
            if (i)
                strcat(joined, " ");
            strcat(joined, cfg.argv[i]);
        }
        words_from_string(&l.cmd, "command", joined, true, err, sizeof err);
    } else {
        l.cmd.argv = cfg.argv;
    }
    if ((cfg.prepare &&
         words_from_string(&l.prepare, "--prepare", cfg.prepare, cfg.shell, err, sizeof err)) ||
        (cfg.cleanup &&
         words_from_string(&l.cleanup, "--cleanup", cfg.cleanup, cfg.shell, err, sizeof err))) {
        log_error("%s", err);
        words_free(&l.prepare);
        free(joined);
        return 2;
    }

    char *runs_dir = xasprintf("%s/runs", cfg.store);
    int store_ok = result_mkdirs(runs_dir) == 0 && access(runs_dir, W_OK | X_OK) == 0;
    if (!store_ok)
        snprintf(err, sizeof err, "cannot use the result store '%s': %s (choose another with "
                 "--store DIR)", runs_dir, strerror(errno));
    /* A store whose index is not ours (or is newer) is refused before anything runs. */
    if (!store_ok || store_check(cfg.store, err, sizeof err) < 0) {
        log_error("%s", err);
        free(runs_dir);
        words_free(&l.prepare);
        words_free(&l.cleanup);
        free(joined);
        return 2;
    }

    if (cfg.nvtx) {
        char *lib = nvtx_library();
        if (!lib) {
            log_error("--nvtx: cannot find libmlbench_nvtx.so beside mlbench (build it, or set "
                      "MLBENCH_NVTX_LIBRARY to its path)");
            free(runs_dir);
            words_free(&l.prepare);
            words_free(&l.cleanup);
            free(joined);
            return 2;
        }
        const char *other = getenv("NVTX_INJECTION64_PATH");
        if (other && *other && strcmp(other, lib) != 0)
            log_warn("--nvtx replaces NVTX_INJECTION64_PATH=%s (another tool, e.g. nsys?) with "
                     "%s for the command", other, lib);
        l.nvtx_var = xasprintf("NVTX_INJECTION64_PATH=%s", lib);
        free(lib);
    }
    result_init(&l.result, &cfg);
    if (runner_init(err, sizeof err) < 0 || !(l.markers = markers_start(err, sizeof err))) {
        log_error("%s", err);
        free(runs_dir);
        return 3;
    }
    struct sampler_config scfg = {.interval_ns = cfg.interval_ns, .all_gpus = cfg.all_gpus};
    l.sampler = sampler_open(&scfg);
    record_sampling(&l.result.sampling, l.sampler, cfg.interval_ns);
    if (cfg.serve) { /* after runner_init: the server's threads leave the signals to us */
        l.live = live_new();
        live_expect_markers(l.live);
        if (!(l.server = http_server_start(cfg.serve, l.live, err, sizeof err))) {
            log_error("--serve: %s", err);
            sampler_close(l.sampler);
            markers_stop(l.markers);
            live_free(l.live);
            result_free(&l.result);
            free(runs_dir);
            words_free(&l.prepare);
            words_free(&l.cleanup);
            free(joined);
            return 2;
        }
        markers_set_listener(l.markers, live_on_marker, l.live);
        sampler_set_listener(l.sampler, live_on_sample, l.live);
        log_info("serving Prometheus metrics at http://%s/metrics", http_server_address(l.server));
    }
    progress_init(&l.progress, cfg.quiet);
    l.socket_var = xasprintf("MLBENCH_MARKER_SOCKET=%s", markers_path(l.markers));
    char *workload_vars[] = {l.socket_var, l.nvtx_var, NULL};
    char *no_vars[] = {NULL};
    l.env = child_env(workload_vars);
    l.env_helper = child_env(no_vars);

    int status = repeat(&l);
    progress_clear(&l.progress);
    l.result.events_outside_runs = markers_outside(l.markers);
    l.result.stop_signal = runner_interrupted();
    if (l.server) { /* the scrapes end before what they read goes away */
        http_server_stop(l.server);
        markers_set_listener(l.markers, NULL, NULL);
        sampler_set_listener(l.sampler, NULL, NULL);
        live_free(l.live);
    }
    markers_stop(l.markers);

    l.result.sampling.errors = sampler_errors(l.sampler);
    l.result.sampling.cpu_ns = sampler_cpu_ns(l.sampler);
    for (size_t i = 0; i < l.result.n_reps; i++)
        l.result.sampling.sampled_ns += l.result.reps[i].outcome.wall_ns;
    summary_compute(&l.result);
    result_capture_environment(&l.result, l.sampler); /* before sampler_close and the analysis */
    resources_analyze(&l.result);
    if (!cfg.runs && l.measured == 1 && l.measured_ns / 1e9 > RUN_AUTO_LONG_SECONDS)
        summary_warn(&l.result.summary, "single_run",
                     "one run took over %.0f s, so only one was made: no confidence interval can be "
                     "given; use -r N to repeat anyway", RUN_AUTO_LONG_SECONDS);

    /* One document for every copy. */
    json_t *doc = result_to_json(&l.result);
    char *path = xasprintf("%s/%s.json", runs_dir, l.result.id);
    int write_failed = 0;
    if (!doc) {
        log_error("cannot build the JSON of result %s (a string is not UTF-8?)", l.result.id);
        write_failed = 1;
        free(path);
        path = NULL;
    } else if (result_write_json(doc, path, err, sizeof err) == 0) {
        if (store_record(cfg.store, path, doc, err, sizeof err) < 0)
            log_warn("%s (the result is in %s; the next mlbench history indexes it)", err, path);
    } else {
        /* The store was writable when we started (disk full since?): keep the result anyway. */
        log_error("%s", err);
        write_failed = 1;
        free(path);
        const char *tmp = getenv("TMPDIR");
        path = xasprintf("%s/mlbench-%s.json", tmp && *tmp ? tmp : "/tmp", l.result.id);
        if (result_write_json(doc, path, err, sizeof err) == 0) {
            log_error("the result was written to %s instead", path);
        } else {
            log_error("%s", err);
            free(path);
            path = NULL;
        }
    }
    if (doc && cfg.output && result_write_json(doc, cfg.output, err, sizeof err) < 0) {
        log_error("%s", err);
        write_failed = 1;
    }
    if (cfg.json && doc)
        summary_text_print_json(stdout, doc, path);
    else if (!cfg.quiet)
        summary_text_print(stdout, &l.result, path);
    fflush(stdout);
    json_decref(doc);

    if (write_failed)
        status = 3;
    else if (l.result.stop_signal)
        status = 128 + l.result.stop_signal;

    result_free(&l.result);
    sampler_close(l.sampler); /* after the result: its tables borrow the series definitions */
    free(path);
    free(runs_dir);
    free(joined);
    free(l.socket_var);
    free(l.nvtx_var);
    free(l.env);
    free(l.env_helper);
    words_free(&l.prepare);
    words_free(&l.cleanup);
    return status;
}

int cmd_run(int argc, char **argv)
{
    struct run_config cfg;
    char err[1024];
    int rc = run_options_parse(argc, argv, &cfg, err, sizeof err);
    if (rc == RUN_OPTIONS_HELP) {
        fputs(run_options_usage(), stdout);
        free(cfg.params);
        return 0;
    }
    if (rc < 0) {
        log_error("%s", err);
        free(cfg.params);
        return 2;
    }
    log_set_quiet(cfg.quiet);

    /* A workflow file: checked now (a bad file runs nothing), then measured as
     * `mlbench workflow-exec FILE`, which marks each step as a stage. */
    char **wf_argv = NULL;
    if (cfg.argc == 1 && workflow_is_file(cfg.argv[0])) {
        if (cfg.shell) {
            log_error("--shell does not apply to a workflow file (set 'shell: true' on a stage)");
            free(cfg.params);
            return 2;
        }
        struct workflow *wf = workflow_load(cfg.argv[0], err, sizeof err);
        for (int i = 0; wf && i < cfg.n_params; i++)
            if (workflow_set_param(wf, cfg.params[i], err, sizeof err) < 0) {
                workflow_free(wf);
                wf = NULL;
            }
        if (!wf) {
            log_error("%s", err);
            free(cfg.params);
            return 2;
        }
        workflow_free(wf);
        char *self = realpath("/proc/self/exe", NULL);
        wf_argv = xcalloc(3 + 2 * (size_t)cfg.n_params + 1, sizeof *wf_argv);
        int n = 0;
        wf_argv[n++] = self ? self : xstrdup("/proc/self/exe");
        wf_argv[n++] = "workflow-exec";
        wf_argv[n++] = cfg.argv[0];
        for (int i = 0; i < cfg.n_params; i++) {
            wf_argv[n++] = "--param";
            wf_argv[n++] = cfg.params[i];
        }
        cfg.argv = wf_argv;
        cfg.argc = n;
    } else if (cfg.n_params) {
        log_error("--param sets a parameter of a workflow file: give a .yaml file as the command");
        free(cfg.params);
        return 2;
    }

    char *default_argv[] = {NULL, "imgclf", "--epochs", "1", NULL};
    if (cfg.argc == 0) { /* no command: the default workflow, once unless -r says otherwise */
        if (!(default_argv[0] = workload_path())) {
            log_error("no command to benchmark, and the default workflow's mlbench-workload is "
                      "not beside mlbench or on PATH: give a command after '--', e.g. "
                      "mlbench run -r 5 -- python train.py");
            free(cfg.params);
            return 2;
        }
        log_info("no command given: running the default workflow%s: %s imgclf --epochs 1 (the "
                 "image-classification reference workload on Fashion-MNIST; give your own "
                 "command after '--', or see mlbench demo)",
                 cfg.runs ? "" : " once", default_argv[0]);
        if (!cfg.runs)
            cfg.runs = 1;
        cfg.argv = default_argv;
        cfg.argc = 4;
    }
    int status = measure(cfg);
    free(default_argv[0]);
    if (wf_argv)
        free(wf_argv[0]);
    free(wf_argv);
    free(cfg.params);
    return status;
}
