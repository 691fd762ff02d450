/* cmd_env: `mlbench env`, describes this machine and environment as every result records it
 * (src/result/envinfo/; fields in docs/environment.md): as text, or the JSON object with --json. */
#include <stdio.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "measure/sampler.h"
#include "result/envinfo.h"
#include "util/log.h"

/* The prose of --help, above and below the options. */
static const char usage[] =
    "Usage: mlbench env [--json]\n"
    "\n"
    "Describes this machine and environment as every result records it: CPU, caches, frequency\n"
    "policy, memory, kernel, distribution, libc, how mlbench was built, the BLAS library and its\n"
    "threads, GPUs (NVML), container or virtual machine, the variables that change ML\n"
    "performance, and the git state of the current directory. docs/environment.md describes\n"
    "every field.\n";
static const char tail[] =
    "Exit status: 0 printed; 1 the output could not be written; 2 bad usage.\n";

int cmd_env(int argc, char **argv)
{
    bool json = false;
    struct envinfo_options opt = {.sources = NULL, .python = "python3"};
    const struct cli_option table[] = {
        CLI_OPT_FLAG("json", 0, &json,
                     .help = "print the JSON object that results carry as `environment`"),
        CLI_OPT_FLAG("no-git", 0, &opt.no_git, .help = "do not run git"),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "env", .options = table,
                                      .flags = CLI_STOP_AT_ARG | CLI_NO_ARGS, .usage = usage,
                                      .tail = tail};
    struct cli_args args;
    int status;
    if (!cli_parse_args(&parser, argc, argv, &args, &status))
        return status;

    /* No sampler runs here: the nvml metric source is opened for its facts alone. */
    char gpu_error[512];
    struct source_facts sources;
    opt.gpu_error = sampler_source_facts("nvml", &sources, gpu_error, sizeof gpu_error) == 0
                        ? NULL : gpu_error;
    opt.sources = &sources;
    json_t *env = envinfo_capture(&opt, NULL);
    source_facts_free(&sources);
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
