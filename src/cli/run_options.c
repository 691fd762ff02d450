/* run_options: option parsing and validation for `mlbench run` (see run_options.h). */
#include "cli/run_options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/http_server.h"
#include "measure/sampler.h"
#include "util/units.h"
#include "util/xalloc.h"

enum {
    OPT_TIMEOUT = 256, OPT_GRACE, OPT_PREPARE, OPT_CLEANUP, OPT_STORE, OPT_JSON, OPT_FAIL_FAST,
    OPT_SHELL, OPT_SHOW_OUTPUT, OPT_INTERVAL, OPT_ALL_GPUS, OPT_NVTX, OPT_PARAM, OPT_SERVE,
};

static const struct option options[] = {
    {"runs", required_argument, NULL, 'r'},
    {"warmup", required_argument, NULL, 'w'},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"prepare", required_argument, NULL, OPT_PREPARE},
    {"cleanup", required_argument, NULL, OPT_CLEANUP},
    {"label", required_argument, NULL, 'l'},
    {"output", required_argument, NULL, 'o'},
    {"store", required_argument, NULL, OPT_STORE},
    {"quiet", no_argument, NULL, 'q'},
    {"json", no_argument, NULL, OPT_JSON},
    {"fail-fast", no_argument, NULL, OPT_FAIL_FAST},
    {"shell", no_argument, NULL, OPT_SHELL},
    {"show-output", no_argument, NULL, OPT_SHOW_OUTPUT},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"all-gpus", no_argument, NULL, OPT_ALL_GPUS},
    {"nvtx", no_argument, NULL, OPT_NVTX},
    {"param", required_argument, NULL, OPT_PARAM},
    {"serve", required_argument, NULL, OPT_SERVE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

const char *run_options_usage(void)
{
    return "usage: mlbench run [options] -- COMMAND [ARGS...]\n"
           "       mlbench run [options] WORKFLOW.yaml   (a pipeline of commands: docs/workflow.md)\n"
           "\n"
           "Runs COMMAND repeatedly and measures it, stage by stage when it sends markers.\n"
           "With no COMMAND, runs the default workflow once: mlbench-workload imgclf --epochs 1\n"
           "(image classification on Fashion-MNIST; docs/workloads.md).\n"
           "\n"
           "  -r, --runs N        measured runs (default: automatic, at least 3 runs and 5 s,\n"
           "                      at most 10; one run when a run takes over 60 s)\n"
           "  -w, --warmup N      warm-up runs before them, kept but not counted (default 0)\n"
           "      --timeout SEC   stop a run after SEC (150ms, 2.5, 10m, 1h): status timeout\n"
           "      --grace SEC     time between SIGTERM and SIGKILL when stopping (default 2)\n"
           "      --prepare CMD   run CMD before each run (not measured)\n"
           "      --cleanup CMD   run CMD after each run (not measured)\n"
           "  -l, --label NAME    name this benchmark (for comparisons and history)\n"
           "  -o, --output FILE   also write the JSON result to FILE\n"
           "      --store DIR     result store (default .mlbench, or $MLBENCH_STORE)\n"
           "  -q, --quiet         no progress and no summary, only errors\n"
           "      --json          print the summary as JSON on stdout\n"
           "      --fail-fast     stop at the first run that does not succeed\n"
           "      --shell         run COMMAND (and --prepare/--cleanup) through /bin/sh -c\n"
           "      --show-output   let the command's stdout and stderr through\n"
           "      --interval SEC  resource sampling interval, 10ms..10s (default 100ms)\n"
           "      --all-gpus      show every GPU, not only those the command used\n"
           "      --nvtx          turn the command's NVTX ranges into stages (no code change)\n"
           "      --param N=V     set parameter N of a workflow file (docs/workflow.md)\n"
           "      --serve ADDR    serve Prometheus /metrics at ADDR while running (e.g. :9464)\n"
           "  -h, --help          this text\n"
           "\n"
           "Exit status: 0 all measured runs succeeded; 1 some run failed, crashed or timed out;\n"
           "2 bad usage; 3 the result could not be written; 127 the command was not found;\n"
           "130/143 interrupted by SIGINT/SIGTERM (the result is written first).\n";
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

static int parse_count(const char *opt, const char *arg, long min, int *out, char *err,
                       size_t errlen)
{
    long v;
    if (units_parse_long(arg, min, 1000000, &v) < 0) {
        snprintf(err, errlen, "%s '%s' is not a whole number from %ld to 1000000", opt, arg, min);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_seconds(const char *opt, const char *arg, double *out, char *err, size_t errlen)
{
    if (units_parse_seconds(arg, out) < 0 || *out <= 0) {
        snprintf(err, errlen, "%s '%s' is not a positive duration (e.g. 30, 2.5s, 150ms, 10m)",
                 opt, arg);
        return -1;
    }
    return 0;
}

static int check_command_string(const char *opt, const char *arg, char *err, size_t errlen)
{
    if (!*arg || strspn(arg, " \t") == strlen(arg)) {
        snprintf(err, errlen, "%s is empty: give a command", opt);
        return -1;
    }
    return 0;
}

int run_options_parse(int argc, char **argv, struct run_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->grace_s = RUN_DEFAULT_GRACE;
    cfg->interval_ns = SAMPLER_DEFAULT_INTERVAL_NS;
    cfg->store = getenv("MLBENCH_STORE");
    if (!cfg->store || !*cfg->store)
        cfg->store = ".mlbench";

    optind = 0; /* full reset: the parser may be used more than once */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:r:w:l:o:qh", options, NULL)) != -1) {
        const char *opt = argv[optind - 1];
        switch (c) {
        case 'r':
            if (parse_count("--runs", optarg, 1, &cfg->runs, err, errlen))
                return -1;
            break;
        case 'w':
            if (parse_count("--warmup", optarg, 0, &cfg->warmup, err, errlen))
                return -1;
            break;
        case OPT_TIMEOUT:
            if (parse_seconds("--timeout", optarg, &cfg->timeout_s, err, errlen))
                return -1;
            break;
        case OPT_GRACE:
            if (parse_seconds("--grace", optarg, &cfg->grace_s, err, errlen))
                return -1;
            break;
        case OPT_PREPARE:
            if (check_command_string("--prepare", optarg, err, errlen))
                return -1;
            cfg->prepare = optarg;
            break;
        case OPT_CLEANUP:
            if (check_command_string("--cleanup", optarg, err, errlen))
                return -1;
            cfg->cleanup = optarg;
            break;
        case 'l':
            if (!*optarg) {
                snprintf(err, errlen, "--label is empty: give a name");
                return -1;
            }
            cfg->label = optarg;
            break;
        case 'o':
            cfg->output = optarg;
            break;
        case OPT_STORE:
            if (!*optarg) {
                snprintf(err, errlen, "--store is empty: give a directory");
                return -1;
            }
            cfg->store = optarg;
            break;
        case 'q':
            cfg->quiet = true;
            break;
        case OPT_JSON:
            cfg->json = true;
            break;
        case OPT_FAIL_FAST:
            cfg->fail_fast = true;
            break;
        case OPT_SHELL:
            cfg->shell = true;
            break;
        case OPT_SHOW_OUTPUT:
            cfg->show_output = true;
            break;
        case OPT_INTERVAL: {
            double sec;
            if (units_parse_seconds(optarg, &sec) < 0 || sec * 1e9 < SAMPLER_MIN_INTERVAL_NS - 1 ||
                sec * 1e9 > SAMPLER_MAX_INTERVAL_NS + 1) {
                snprintf(err, errlen, "--interval '%s' is not a duration from 10ms to 10s "
                         "(e.g. 100ms, 0.5, 2s)", optarg);
                return -1;
            }
            cfg->interval_ns = (int64_t)(sec * 1e9 + 0.5);
            break;
        }
        case OPT_ALL_GPUS:
            cfg->all_gpus = true;
            break;
        case OPT_NVTX:
            cfg->nvtx = true;
            break;
        case OPT_SERVE: {
            struct sockaddr_storage addr;
            socklen_t len;
            if (http_parse_listen(optarg, &addr, &len, err, errlen) < 0)
                return -1;
            cfg->serve = optarg;
            break;
        }
        case OPT_PARAM:
            if (!strchr(optarg, '=') || optarg[0] == '=') {
                snprintf(err, errlen, "--param '%s' is not NAME=VALUE", optarg);
                return -1;
            }
            if (!cfg->params)
                cfg->params = xcalloc((size_t)argc, sizeof *cfg->params);
            cfg->params[cfg->n_params++] = optarg;
            break;
        case 'h':
            return RUN_OPTIONS_HELP;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value (see mlbench run --help)", opt);
            return -1;
        default:
            if (optopt && optopt < 256)
                snprintf(err, errlen, "unknown option '-%c' (see mlbench run --help)", optopt);
            else
                snprintf(err, errlen, "unknown option '%s' (see mlbench run --help)", opt);
            return -1;
        }
    }
    if (optind >= argc) { /* no command: cmd_run runs the default workflow */
        cfg->argv = NULL;
        cfg->argc = 0;
        return cfg->output && check_writable_file(cfg->output, "output file", err, errlen) ? -1
                                                                                            : 0;
    }
    if (!*argv[optind]) {
        snprintf(err, errlen, "the command is an empty string: give a program to run");
        return -1;
    }
    cfg->argv = &argv[optind];
    cfg->argc = argc - optind;
    if (cfg->output && check_writable_file(cfg->output, "output file", err, errlen))
        return -1;
    return 0;
}
