/* cmd_env: `mlbench env`, describes this machine and environment as every result records it
 * (src/result/envinfo/; fields in docs/environment.md): as text, or the JSON object with --json. */
#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/commands.h"
#include "measure/sampler.h"
#include "result/envinfo.h"
#include "util/log.h"

static const char usage[] =
    "usage: mlbench env [--json]\n"
    "\n"
    "Describes this machine and environment as every result records it: CPU, caches, frequency\n"
    "policy, memory, kernel, distribution, libc, how mlbench was built, the BLAS library and its\n"
    "threads, GPUs (NVML), container or virtual machine, the variables that change ML\n"
    "performance, and the git state of the current directory. docs/environment.md describes\n"
    "every field.\n"
    "\n"
    "      --json      print the JSON object that results carry as `environment`\n"
    "      --no-git    do not run git\n"
    "  -h, --help      this text\n"
    "\n"
    "Exit status: 0 printed; 1 the output could not be written; 2 bad usage.\n";

int cmd_env(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_NO_GIT };
    static const struct option options[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"no-git", no_argument, NULL, OPT_NO_GIT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    struct envinfo_options opt = {.sources = NULL};
    optind = 0; /* GNU getopt: reinitialise, and argv[0] is the verb */
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, "+h", options, NULL);
        if (c == -1)
            break;
        switch (c) {
        case OPT_JSON: json = true; break;
        case OPT_NO_GIT: opt.no_git = true; break;
        case 'h': fputs(usage, stdout); return 0;
        default:
            log_error("env: unknown option '%s' (see mlbench env --help)", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        log_error("env: unexpected argument '%s' (see mlbench env --help)", argv[optind]);
        return 2;
    }

    /* No sampler runs here: the nvml metric source is opened for its facts alone. */
    char gpu_error[512];
    json_t *sources = sampler_describe_source("nvml", gpu_error, sizeof gpu_error);
    opt.sources = sources;
    opt.gpu_error = json_object_get(sources, "nvml") ? NULL : gpu_error;
    json_t *env = envinfo_capture(&opt);
    json_decref(sources);
    int rc = 0;
    if (json) {
        rc = json_dumpf(env, stdout, JSON_INDENT(2)) == 0 ? 0 : 1;
        fputc('\n', stdout);
    } else {
        envinfo_print(stdout, env);
    }
    json_decref(env);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        log_error("env: cannot write the output");
        rc = 1;
    }
    return rc;
}
