/* run_options: option parsing and validation for `mlbench run` (see run_options.h). */
#include "cli/run_options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "measure/sampler.h"
#include "result/price.h"
#include "util/units.h"
#include "util/xalloc.h"

/* The prose of run's --help, above and below its options (the rows of run_table). */
static const char usage[] =
    "Usage: mlbench run [options] -- COMMAND [ARGS...]\n"
    "  or:  mlbench run [options] WORKFLOW.yaml   (a pipeline of commands: docs/workflow.md)\n"
    "\n"
    "Runs COMMAND repeatedly and measures it, stage by stage when it sends markers.\n"
    "With no COMMAND, runs the default workflow once: mlbench-workload imgclf --epochs 1\n"
    "(image classification on Fashion-MNIST; docs/workloads.md).\n";
static const char tail[] =
    "Exit status: 0 all measured runs succeeded; 1 some run failed, crashed or timed out;\n"
    "2 bad usage; 3 the result could not be written; 127 the command was not found;\n"
    "130/143 interrupted by SIGINT/SIGTERM (the result is written first).\n";

/* The launchers --ranks accepts as COMMAND: MPI's, Slurm's and PyTorch's (docs/ranks.md). */
static const char *const launchers[] = {"mpirun", "mpiexec", "mpiexec.hydra", "orterun",
                                        "prterun", "srun", "torchrun", NULL};

static bool is_launcher(const char *word, size_t len)
{
    const char *base = word;
    for (size_t i = 0; i < len; i++)
        if (word[i] == '/')
            base = word + i + 1;
    size_t n = len - (size_t)(base - word);
    for (size_t k = 0; launchers[k]; k++)
        if (strlen(launchers[k]) == n && !strncmp(base, launchers[k], n))
            return true;
    return n == strlen("torch.distributed.run") && !strncmp(base, "torch.distributed.run", n);
}

/* --ranks: COMMAND starts the ranks through a launcher, the first word (or, with --shell, any
 * word of the line; or `python -m torch.distributed.run`). 0, or -1 with the message in err. */
static int check_launcher(const struct run_config *cfg, char *err, size_t errlen)
{
    if (cfg->argc == 0) {
        snprintf(err, errlen, "--ranks needs a COMMAND that starts the ranks, e.g. mlbench run "
                 "--ranks -- mpirun -n 2 ./train");
        return -1;
    }
    for (int i = 0; i < cfg->argc; i++) {
        const char *w = cfg->argv[i];
        if (cfg->shell) { /* every word of the line */
            for (const char *p = w; *p;) {
                size_t n = strcspn(p, " \t\n;&|()");
                if (n && is_launcher(p, n))
                    return 0;
                p += n + (p[n] != '\0');
            }
        } else if (i == 0 ? is_launcher(w, strlen(w))
                          : !strcmp(w, "torch.distributed.run") ||
                                !strcmp(w, "torch.distributed.launch")) {
            return 0;
        }
        if (!cfg->shell && i > 1)
            break; /* python -m torch.distributed.run: the module is the third word at most */
    }
    char shown[64];
    snprintf(shown, sizeof shown, "%s", cfg->argv[0]);
    snprintf(err, errlen, "--ranks: '%s' is not a launcher of ranks (mpirun, mpiexec, srun, "
             "torchrun, python -m torch.distributed.run): start the ranks with one, e.g. "
             "mlbench run --ranks -- mpirun -n 2 %s", shown, shown);
    return -1;
}

/* Checks that path can be created or overwritten as a file. */
static int check_writable_file(const char *path, const char *what, char *err, size_t errlen)
{
    struct stat st;
    if (!*path) {
        snprintf(err, errlen, "%s is empty: give a file name", what);
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s '%s' is a directory: give a file name", what, path);
            return -1;
        }
        if (access(path, W_OK) < 0) {
            snprintf(err, errlen, "cannot write %s '%s': %s", what, path, strerror(errno));
            return -1;
        }
        return 0;
    }
    /* The file does not exist yet: its directory must exist and be writable. */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s '%s': directory '%s' does not exist", what, path,
                 dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        snprintf(err, errlen, "cannot write %s '%s': directory '%s': %s", what, path, dir,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static int check_param(const char *value, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return strchr(value, '=') && value[0] != '=' ? 0 : -1; /* "--param 'X' is not NAME=VALUE" */
}

/* --price and --price-file: parsed now, so that a bad price stops before anything runs. */
static int store_price(void *dest, const char *value, char *err, size_t errlen)
{
    struct price_spec **spec = dest;
    if (*spec) {
        snprintf(err, errlen, "--price '%s': a price is given already (--price or --price-file "
                 "once)", value);
        return -1;
    }
    *spec = xcalloc(1, sizeof **spec);
    char why[900];
    if (price_spec_from_price(*spec, value, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "--price %s", why);
    return -1;
}

static int store_price_file(void *dest, const char *value, char *err, size_t errlen)
{
    struct price_spec **spec = dest;
    if (*spec) {
        snprintf(err, errlen, "--price-file '%s': a price is given already (--price or "
                 "--price-file once)", value);
        return -1;
    }
    *spec = xcalloc(1, sizeof **spec);
    char why[900];
    if (price_spec_load_file(*spec, value, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "--price-file: %s", why);
    return -1;
}

void run_options_free(struct run_options *o)
{
    strvec_free(&o->params);
    price_spec_free(o->session.price);
    free(o->session.price);
    o->session.price = NULL;
}

/* The option table of run (and of sweep's run options), filled into out (RUN_TABLE_ROWS rows). */
#define RUN_TABLE_ROWS 32
static void run_table(struct run_options *o, struct cli_option *out)
{
    struct run_config *cfg = &o->run;
    struct session_options *session = &o->session;
    static const char timeout[] =
        "is not a positive duration up to 365 days, 8760h (e.g. 30, 2.5s, 150ms, 10m)";
    static const char grace[] = "is not a positive duration up to 1h (e.g. 5, 2.5s, 500ms)";
    const struct cli_option table[] = {
        CLI_OPT_INTEGER("runs", 'r', &cfg->runs, 1, 1000000, 0, NULL, .metavar = "N",
                        .help = "measured runs (default: automatic, at least 3 runs and 5 s, "
                                "at most 10; one run when a run takes over 60 s)"),
        CLI_OPT_INTEGER("warmup", 'w', &cfg->warmup, 0, 1000000, 0, NULL, .metavar = "N",
                        .help = "warm-up runs before them, kept but not counted (default 0)"),
        CLI_OPT_SECONDS("timeout", 0, &cfg->timeout_s, 0, RUN_MAX_TIMEOUT_S, CLI_OPEN_MIN, timeout,
                        .metavar = "SEC",
                        .help = "stop a run after SEC (150ms, 2.5, 10m, 1h): status timeout"),
        CLI_OPT_SECONDS("grace", 0, &cfg->grace_s, 0, RUN_MAX_GRACE_S, CLI_OPEN_MIN, grace,
                        .metavar = "SEC",
                        .help = "time between SIGTERM and SIGKILL when stopping (default 2)"),
        CLI_OPT_STRING("prepare", 0, &cfg->prepare, CLI_NOT_BLANK, "is empty: give a command",
                       .metavar = "CMD", .help = "run CMD before each run (not measured)"),
        CLI_OPT_STRING("cleanup", 0, &cfg->cleanup, CLI_NOT_BLANK, "is empty: give a command",
                       .metavar = "CMD", .help = "run CMD after each run (not measured)"),
        CLI_OPT_STRING("label", 'l', &cfg->label, CLI_NONEMPTY, "is empty: give a name",
                       .metavar = "NAME",
                       .help = "name this benchmark (for comparisons and history)"),
        CLI_OPT_STRING("output", 'o', &session->output, 0, NULL, .metavar = "FILE",
                       .help = "also write the JSON result to FILE"),
        CLI_OPT_STORE(&session->store),
        CLI_OPT_FLAG("quiet", 'q', &session->quiet,
                     .help = "no progress and no summary, only errors"),
        CLI_OPT_FLAG("json", 0, &o->json, .help = "print the summary as JSON on stdout"),
        CLI_OPT_FLAG("fail-fast", 0, &cfg->fail_fast,
                     .help = "stop at the first run that does not succeed"),
        CLI_OPT_FLAG("shell", 0, &cfg->shell,
                     .help = "run COMMAND (and --prepare/--cleanup) through /bin/sh -c"),
        CLI_OPT_FLAG("show-output", 0, &cfg->show_output,
                     .help = "let the command's stdout and stderr through"),
        CLI_OPT_NANOSECONDS("interval", 0, &cfg->interval_ns, SAMPLER_MIN_INTERVAL_NS,
                            SAMPLER_MAX_INTERVAL_NS,
                            "is not a duration from 10ms to 10s (e.g. 100ms, 0.5, 2s)",
                            .metavar = "SEC",
                            .help = "resource sampling interval, 10ms..10s (default: from 10ms, "
                                    "growing to 100ms after 2s of a run)"),
        CLI_OPT_FLAG("all-gpus", 0, &cfg->all_gpus,
                     .help = "show every GPU, not only those the command used"),
        CLI_OPT_FLAG("discard-throttled", 0, &cfg->discard_throttled,
                     .help = "leave runs in which a busy GPU slowed its clocks (power, thermal) "
                             "out of the statistics, and say how many"),
        CLI_OPT_NUMBER("throttle-threshold", 0, &cfg->throttle_threshold_pct, 1, 100,
                       CLI_PERCENT, "is not a percentage from 1 to 100 (e.g. 75)",
                       .metavar = "PCT",
                       .help = "a busy GPU's SM clock below PCT % of its maximum marks a sample "
                               "throttled, 1..100 (default 75, nvbench's)"),
        CLI_OPT_FLAG("nvtx", 0, &cfg->nvtx,
                     .help = "turn the command's NVTX ranges into stages (no code change)"),
        CLI_OPT_FLAG("ranks", 0, &cfg->ranks,
                     .help = "COMMAND is a multi-rank job (mpirun, mpiexec, srun, torchrun): "
                             "stages per rank, stragglers (docs/ranks.md)"),
        CLI_OPT_LISTEN("ranks-listen", &cfg->ranks_listen, .metavar = "HOST:PORT",
                       .help = "with --ranks, collect the ranks of other hosts (mlbench "
                               "rank-exec there; mpirun -x MLBENCH_RANK_COLLECTOR)"),
        CLI_OPT_STRINGS("param", 0, &o->params, 0, check_param, "is not NAME=VALUE",
                        .metavar = "N=V",
                        .help = "set parameter N of a workflow file (docs/workflow.md)"),
        CLI_OPT_LISTEN("serve", &session->serve, .metavar = "ADDR",
                       .help = "serve Prometheus /metrics at ADDR while running (e.g. :9464)"),
        CLI_OPT_CALL("price", 0, &session->price, store_price, NULL, .metavar = "P",
                     .help = "price per hour of this machine, with a currency (3.50, '2.1 EUR'; "
                             "default USD): results carry their cost (docs/cost.md)"),
        CLI_OPT_CALL("price-file", 0, &session->price, store_price_file, NULL, .metavar = "F",
                     .help = "prices per hour by machine name (YAML), matched against what "
                             "mlbench env reports (docs/cost.md)"),
        CLI_OPT_END,
    };
    _Static_assert(sizeof table / sizeof table[0] <= RUN_TABLE_ROWS, "RUN_TABLE_ROWS");
    memcpy(out, table, sizeof table);
}

int run_options_parse(int argc, char **argv, struct run_options *o, char *err, size_t errlen)
{
    /* run's own rows: sweep prints its own table, not a result's summary */
    const struct cli_option own[] = {
        CLI_OPT_FLAG("verbose", 'v', &o->verbose,
                     .help = "the summary in full: every stage's verdict, every finding, the "
                             "resources per stage, CPU, memory and metadata (the default is the "
                             "answer, the stage table and the warnings)"),
        CLI_OPT_FLAG("explain", 0, &o->verbose, .help = "the same as --verbose"),
        CLI_OPT_END,
    };
    const struct cli_parser run = {.verb = "run", .options = own, .usage = usage, .tail = tail};
    return run_options_parse_with(&run, argc, argv, o, err, errlen);
}

int run_options_parse_with(const struct cli_parser *own, int argc, char **argv,
                           struct run_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    struct run_config *cfg = &o->run;
    cfg->grace_s = RUN_DEFAULT_GRACE;
    cfg->interval_ns = 0; /* not given: adaptive, below */
    o->session.store = getenv("MLBENCH_STORE");
    if (!o->session.store || !*o->session.store)
        o->session.store = ".mlbench";

    size_t n_own = 0;
    while (own->options[n_own].name)
        n_own++;
    struct cli_option *table = xcalloc(RUN_TABLE_ROWS + n_own, sizeof *table);
    run_table(o, table);
    size_t n = 0;
    while (table[n].name)
        n++;
    memcpy(table + n, own->options, (n_own + 1) * sizeof *table);
    if (n_own && strcmp(own->verb, "run")) /* --help: run's rows, then the verb's, each under
                                             * a heading */
        table[0].group = "Options of mlbench run:";
    const struct cli_parser parser = {.verb = own->verb, .options = table,
                                      .flags = CLI_STOP_AT_ARG, .usage = own->usage,
                                      .tail = own->tail};
    struct cli_args args;
    int rc = cli_options_parse(&parser, argc, argv, &args, err, errlen);
    free(table);
    cfg->interval_adaptive = cfg->interval_ns == 0;
    if (cfg->interval_adaptive)
        cfg->interval_ns = SAMPLER_DEFAULT_INTERVAL_NS;
    if (rc != CLI_OK)
        return rc == CLI_HELP ? RUN_OPTIONS_HELP : -1;
    /* A parameter given twice kept the last value silently (issue 13); a command line holds
     * few, so comparing each with the earlier ones is cheap. */
    const struct strvec *params = &o->params;
    for (size_t i = 1; i < params->n; i++)
        for (size_t k = 0; k < i; k++) {
            size_t len = (size_t)(strchr(params->v[i], '=') - params->v[i]);
            if (!strncmp(params->v[i], params->v[k], len + 1)) {
                snprintf(err, errlen, "--param '%.*s' is given twice (%s, then %s): give each "
                         "parameter once", (int)len, params->v[i], params->v[k], params->v[i]);
                return -1;
            }
        }
    if (args.n == 0) { /* no command: cmd_run runs the default workflow */
        cfg->argv = NULL;
        cfg->argc = 0;
    } else if (!*args.v[0]) {
        snprintf(err, errlen, "the command is an empty string: give a program to run");
        return -1;
    } else {
        cfg->argv = args.v;
        cfg->argc = args.n;
    }
    if (o->session.output && check_writable_file(o->session.output, "output file", err, errlen))
        return -1;
    if (cfg->ranks_listen)
        cfg->ranks = true; /* collecting ranks is a multi-rank job */
    if (cfg->ranks && check_launcher(cfg, err, errlen))
        return -1;
    return 0;
}
