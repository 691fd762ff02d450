/* cmd_sweep: `mlbench sweep`: reads the sweep's own options (-L, -P, -D, -c, -n, --find-max,
 * --objective, ...: rows parsed with run's in one pass, run_options_parse_with; hyperfine's
 * -L NAME VALUES and -P NAME MIN MAX take several words), builds the points (every
 * combination, {NAME} substituted; or the commands), hands them to session/sweep.c and prints
 * the sweep table. docs/sweep.md describes it all. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "session/sweep.h"
#include "cli/commands.h"
#include "cli/run_options.h"
#include "export/sweep.h"
#include "measure/cmdline.h"
#include "measure/workflow.h"
#include "util/log.h"
#include "util/units.h"
#include "util/xalloc.h"

/* The prose of --help, above and below the options (run's rows and sweep_rows). */
static const char usage[] =
    "Usage: mlbench sweep [run options] -L NAME V1,V2,... [-L ...] -- COMMAND ... {NAME} ...\n"
    "  or:  mlbench sweep [run options] -P NAME MIN MAX [-D STEP] -- COMMAND ... {NAME} ...\n"
    "  or:  mlbench sweep [run options] -c 'COMMAND A' -c 'COMMAND B' [-n NAME ...]\n"
    "  or:  mlbench sweep [run options] --find-max NAME=LO..HI -- COMMAND ... {NAME} ...\n"
    "\n"
    "Measures every point (each combination of the parameters' values, or each command) as a\n"
    "full benchmark stored as its own result, then prints one row per point and the winner.\n"
    "By default the runs are interleaved: round r runs every point once, in a shuffled order,\n"
    "so drift and other load fall on all points alike.\n";
static const char tail[] =
    "Every option of mlbench run applies to each point (-r, -w, --timeout, --prepare, ...);\n"
    "-o FILE writes the sweep document (mlbench.sweep/1), --json prints it.\n"
    "Literal braces: {{NAME}} is written as {NAME}.\n"
    "\n"
    "Exit status: 0 every point ran; 1 a point failed (out of memory in --find-max is an\n"
    "answer, not a failure); 2 bad usage; 3 a result could not be written; 130/143\n"
    "interrupted (every finished point and the sweep document are written first).\n";

/* -L NAME VALUES or -P NAME MIN MAX [-D STEP], as given: -P is built once --pow2 is known. */
struct param_def {
    bool list;
    char *words[4];
};

struct sweep_cli {
    struct sweep_spec spec;
    struct param_def *defs;
    size_t n_defs;
    char **commands;           /* -c */
    size_t n_commands;
    char **names;              /* -n */
    size_t n_names;
    const char *find_max;
    const char *budget;
    const char *probe_args;
    const char *seed;
    bool pow2, no_interleave;
    struct cmdline *splits;    /* -c without --shell, and --probe-args */
    size_t n_splits;
};

static void push(char ***v, size_t *n, char *s)
{
    *v = xreallocarray(*v, *n + 1, sizeof **v);
    (*v)[(*n)++] = s;
}

/* ---- sweep's own options: rows parsed with run's (run_options_parse_with) ---- */

static struct param_def *add_def(struct sweep_cli *c, bool list, char **words, int n)
{
    c->defs = xreallocarray(c->defs, c->n_defs + 1, sizeof *c->defs);
    struct param_def *d = &c->defs[c->n_defs++];
    memset(d, 0, sizeof *d);
    d->list = list;
    for (int w = 0; w < n; w++)
        d->words[w] = words[w];
    return d;
}

static int store_list(void *dest, char **words, int n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    add_def(dest, true, words, n);
    return 0;
}

static int store_scan(void *dest, char **words, int n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    add_def(dest, false, words, n);
    return 0;
}

static int store_step(void *dest, const char *value, char *err, size_t errlen)
{
    struct sweep_cli *c = dest;
    struct param_def *d = c->n_defs ? &c->defs[c->n_defs - 1] : NULL;
    if (!d || d->list || d->words[3]) {
        snprintf(err, errlen, "-D STEP follows a -P NAME MIN MAX (the scan it steps)");
        return -1;
    }
    d->words[3] = (char *)value;
    return 0;
}

static int store_command(void *dest, const char *value, char *err, size_t errlen)
{
    struct sweep_cli *c = dest;
    if (!*value || strspn(value, " \t") == strlen(value)) {
        snprintf(err, errlen, "-c: the command is empty: give a command to measure");
        return -1;
    }
    push(&c->commands, &c->n_commands, (char *)value);
    return 0;
}

static int store_name(void *dest, const char *value, char *err, size_t errlen)
{
    struct sweep_cli *c = dest;
    if (!*value) {
        snprintf(err, errlen, "-n: the name is empty: give a name");
        return -1;
    }
    push(&c->names, &c->n_names, (char *)value);
    return 0;
}

static int store_oom_pattern(void *dest, const char *value, char *err, size_t errlen)
{
    struct sweep_spec *s = dest;
    if (!*value) {
        snprintf(err, errlen, "--oom-pattern is empty: give the text that means out of memory");
        return -1;
    }
    s->oom_patterns = xreallocarray(s->oom_patterns, s->n_oom_patterns + 1,
                                    sizeof *s->oom_patterns);
    s->oom_patterns[s->n_oom_patterns++] = (char *)value;
    return 0;
}

static int store_constraint(void *dest, const char *value, char *err, size_t errlen)
{
    struct sweep_spec *s = dest;
    s->constraints = xreallocarray(s->constraints, s->n_constraints + 1, sizeof *s->constraints);
    s->constraint_specs = xreallocarray(s->constraint_specs, s->n_constraints + 1,
                                        sizeof *s->constraint_specs);
    if (sweep_constraint_parse(value, &s->constraints[s->n_constraints], err, errlen))
        return -1;
    s->constraint_specs[s->n_constraints++] = (char *)value;
    return 0;
}

/* The rows of sweep's own options into out (SWEEP_ROWS of them, ended by CLI_OPT_END). */
#define SWEEP_ROWS 16
static void sweep_rows(struct sweep_cli *c, struct cli_option *out)
{
    struct sweep_spec *s = &c->spec;
    const struct cli_option rows[] = {
        CLI_OPT_WORDS("parameter-list", 'L', c, 2, store_list,
                      "needs NAME and VALUES, e.g. -L batch 32,64,128",
                      .metavar = "NAME V1,V2,...", .group = "Options of the sweep:",
                      .help = "a parameter and its values; {NAME} in the command, --prepare "
                              "and --cleanup is replaced by each value"),
        CLI_OPT_WORDS("parameter-scan", 'P', c, 3, store_scan,
                      "needs NAME MIN MAX, e.g. -P threads 1 4", .metavar = "NAME MIN MAX",
                      .help = "the numbers MIN, MIN+STEP, ... up to MAX"),
        CLI_OPT_CALL("parameter-step-size", 'D', c, store_step, NULL, .metavar = "STEP",
                     .help = "the step of the -P before it (default 1)"),
        CLI_OPT_FLAG("pow2", 0, &c->pow2, .help = "-P and --find-max: powers of two only"),
        CLI_OPT_CALL("command", 'c', c, store_command, NULL, .metavar = "CMD",
                     .help = "a command to measure (repeat for several); split into words "
                             "like --prepare, through /bin/sh only with --shell"),
        CLI_OPT_CALL("command-name", 'n', c, store_name, NULL, .metavar = "NAME",
                     .help = "the name of the -c of the same position"),
        CLI_OPT_FLAG("no-interleave", 0, &c->no_interleave,
                     .help = "run the points one after another"),
        CLI_OPT_STRING("seed", 0, &c->seed, 0, NULL, .metavar = "N",
                       .help = "seed of the interleaved order (default: random, recorded)"),
        CLI_OPT_STRING("objective", 0, &s->objective_spec, 0, NULL, .metavar = "SPEC",
                       .help = "what the winner has: min:total (default), min:stage:NAME, "
                               "max:counter:NAME (NAME_per_s: the rate of count counter NAME), "
                               "min:memory, min:gpu_memory, min:cost"),
        CLI_OPT_CALL("constraint", 0, s, store_constraint, NULL, .metavar = "SPEC",
                     .help = "a point qualifies only if it holds (repeatable): "
                             "counter:accuracy>=0.9, memory<=8GiB, total<2s, cost<=0.01"),
        CLI_OPT_STRING("find-max", 0, &c->find_max, 0, NULL, .metavar = "NAME=LO..HI",
                       .help = "the largest value that fits: doubling from LO while the point "
                               "fits, then bisection (each probe -r 1 unless told)"),
        CLI_OPT_STRING("memory-budget", 0, &c->budget, 0, NULL, .metavar = "SIZE",
                       .help = "a point whose peak memory (GPU memory when measured) exceeds "
                               "SIZE does not fit (e.g. 8GiB)"),
        CLI_OPT_STRING("probe-args", 0, &c->probe_args, 0, NULL, .metavar = "ARGS",
                       .help = "words appended to the command of each --find-max probe"),
        CLI_OPT_CALL("oom-pattern", 0, s, store_oom_pattern, NULL, .metavar = "TEXT",
                     .help = "stderr holding TEXT means out of memory (repeatable)"),
        CLI_OPT_END,
    };
    _Static_assert(sizeof rows / sizeof rows[0] <= SWEEP_ROWS, "SWEEP_ROWS");
    memcpy(out, rows, sizeof rows);
}

/* Substitutes one word (or NULL) for combination idx; on an unknown name, -1 with err. */
static int subst(const struct sweep_spec *s, const char *in, const char *what, const size_t *idx,
                 bool *used, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!in)
        return 0;
    *out = sweep_substitute(in, what, s->params, s->n_params, idx, used, err, errlen);
    return *out ? 0 : -1;
}

static int build_matrix(struct sweep_cli *c, const struct run_config *cfg, char *err,
                        size_t errlen)
{
    struct sweep_spec *s = &c->spec;
    if (cfg->argc == 0) {
        snprintf(err, errlen, "no command: give it after '--' with {NAME} where each value goes, "
                 "e.g. mlbench sweep -L batch 32,64 -- ./train --batch {batch}");
        return -1;
    }
    size_t n = sweep_product_size(s->params, s->n_params);
    if (n == 0) {
        snprintf(err, errlen, "the parameters make more than %d points: sweep fewer values",
                 SWEEP_MAX_POINTS);
        return -1;
    }
    bool used[SWEEP_MAX_PARAMS] = {false};
    size_t idx[SWEEP_MAX_PARAMS];
    s->points = xcalloc(n, sizeof *s->points);
    for (size_t k = 0; k < n; k++) {
        struct sweep_point_def *p = &s->points[s->n_points++];
        sweep_combination(s->params, s->n_params, k, idx);
        p->argv = xcalloc((size_t)cfg->argc + 1, sizeof *p->argv);
        for (int w = 0; w < cfg->argc; w++, p->argc++)
            if (subst(s, cfg->argv[w], "the command", idx, used, &p->argv[w], err, errlen))
                return -1;
        if (subst(s, cfg->prepare, "--prepare", idx, used, &p->prepare, err, errlen) ||
            subst(s, cfg->cleanup, "--cleanup", idx, used, &p->cleanup, err, errlen))
            return -1;
        p->name = sweep_point_name(s->params, s->n_params, idx);
        p->parameters = json_object();
        for (size_t j = 0; j < s->n_params; j++)
            json_object_set_new(p->parameters, s->params[j].name,
                                json_string(s->params[j].values[idx[j]]));
    }
    for (size_t j = 0; j < s->n_params; j++)
        if (!used[j]) {
            snprintf(err, errlen, "parameter '%s' is not used: write {%s} in the command (or "
                     "--prepare/--cleanup) where its value goes", s->params[j].name,
                     s->params[j].name);
            return -1;
        }
    return 0;
}

static int build_commands(struct sweep_cli *c, const struct run_config *cfg, char *err,
                          size_t errlen)
{
    struct sweep_spec *s = &c->spec;
    if (cfg->argc > 0) {
        snprintf(err, errlen, "-c gives the commands: '%s' after the options is one too many "
                 "(put it in a -c, or use -L/-P with one command)", cfg->argv[0]);
        return -1;
    }
    if (c->n_names > c->n_commands) {
        snprintf(err, errlen, "%zu -n names for %zu -c commands: give at most one name per "
                 "command", c->n_names, c->n_commands);
        return -1;
    }
    s->points = xcalloc(c->n_commands, sizeof *s->points);
    c->splits = xcalloc(c->n_commands + 1, sizeof *c->splits);
    for (size_t k = 0; k < c->n_commands; k++) {
        struct sweep_point_def *p = &s->points[s->n_points++];
        if (cfg->shell) { /* the session joins the words and runs them through /bin/sh -c */
            p->argv = xcalloc(2, sizeof *p->argv);
            p->argv[0] = xstrdup(c->commands[k]);
            p->argc = 1;
        } else {
            struct cmdline *cl = &c->splits[c->n_splits];
            if (cmdline_split(cl, "-c", c->commands[k], false, err, errlen))
                return -1;
            c->n_splits++;
            while (cl->argv[p->argc])
                p->argc++;
            p->argv = xcalloc((size_t)p->argc + 1, sizeof *p->argv);
            for (int w = 0; w < p->argc; w++)
                p->argv[w] = xstrdup(cl->argv[w]);
        }
        p->prepare = cfg->prepare ? xstrdup(cfg->prepare) : NULL;
        p->cleanup = cfg->cleanup ? xstrdup(cfg->cleanup) : NULL;
        p->name = xstrdup(k < c->n_names ? c->names[k] : c->commands[k]);
        p->parameters = json_object();
        for (size_t j = 0; j < k; j++)
            if (!strcmp(s->points[j].name, p->name)) {
                snprintf(err, errlen, "two points are named '%.200s': give each -c its own "
                         "-n NAME", p->name);
                return -1;
            }
    }
    return 0;
}

static int build_find_max(struct sweep_cli *c, const struct run_config *cfg, char *err,
                          size_t errlen)
{
    struct sweep_spec *s = &c->spec;
    if (sweep_search_parse(&s->search, s->search_name, c->find_max, c->pow2, err, errlen))
        return -1;
    if (cfg->argc == 0) {
        snprintf(err, errlen, "--find-max: give the command after '--' with {%s} where the value "
                 "goes", s->search_name);
        return -1;
    }
    /* The template must name the parameter, and nothing else. */
    char value[32];
    snprintf(value, sizeof value, "%lld", s->search.lo);
    char *values[] = {value};
    struct sweep_param param = {.name = s->search_name, .values = values, .n = 1};
    bool used = false;
    size_t idx = 0;
    for (int w = 0; w < cfg->argc + 2; w++) {
        const char *word = w < cfg->argc ? cfg->argv[w] : w == cfg->argc ? cfg->prepare
                                                                          : cfg->cleanup;
        const char *what = w < cfg->argc ? "the command" : w == cfg->argc ? "--prepare"
                                                                          : "--cleanup";
        if (!word)
            continue;
        char *out = sweep_substitute(word, what, &param, 1, &idx, &used, err, errlen);
        if (!out)
            return -1;
        free(out);
    }
    if (!used) {
        snprintf(err, errlen, "--find-max %s: the command has no {%s}: write it where the value "
                 "goes, e.g. -- ./train --batch {%s}", c->find_max, s->search_name,
                 s->search_name);
        return -1;
    }
    if (c->probe_args) {
        c->splits = xcalloc(1, sizeof *c->splits);
        if (cmdline_split(&c->splits[0], "--probe-args", c->probe_args, false, err, errlen))
            return -1;
        c->n_splits = 1;
        for (char **w = c->splits[0].argv; *w; w++) {
            s->probe_args = xreallocarray(s->probe_args, (size_t)s->n_probe_args + 1,
                                          sizeof *s->probe_args);
            s->probe_args[s->n_probe_args++] = xstrdup(*w);
        }
    }
    return 0;
}

/* Checks the combination of modes and builds the spec. Returns 0 or -1 with err. */
static int build(struct sweep_cli *c, struct run_options *o, char *err, size_t errlen)
{
    struct sweep_spec *s = &c->spec;
    struct run_config *cfg = &o->run;
    s->cfg = cfg;
    s->opts = &o->session;
    int modes = (c->n_defs > 0) + (c->n_commands > 0) + (c->find_max != NULL);
    if (modes == 0) {
        snprintf(err, errlen, "nothing to sweep: give -L NAME V1,V2 (or -P NAME MIN MAX) with a "
                 "command using {NAME}, -c CMD several times, or --find-max NAME=LO..HI (see "
                 "mlbench sweep --help)");
        return -1;
    }
    if (modes > 1) {
        snprintf(err, errlen, "give one of -L/-P (a parameter matrix), -c (several commands) and "
                 "--find-max (the largest value that fits), not several");
        return -1;
    }
    if (c->n_names && !c->n_commands) {
        snprintf(err, errlen, "-n names a -c command: there is none");
        return -1;
    }
    if (c->n_defs > SWEEP_MAX_PARAMS) {
        snprintf(err, errlen, "%zu parameters: at most %d", c->n_defs, SWEEP_MAX_PARAMS);
        return -1;
    }
    s->params = xcalloc(c->n_defs + 1, sizeof *s->params);
    for (size_t j = 0; j < c->n_defs; j++) {
        struct param_def *d = &c->defs[j];
        int bad = d->list ? sweep_param_list(&s->params[j], d->words[0], d->words[1], err, errlen)
                          : sweep_param_range(&s->params[j], d->words[0], d->words[1], d->words[2],
                                              d->words[3], c->pow2, err, errlen);
        if (bad)
            return -1;
        s->n_params++;
        for (size_t k = 0; k < j; k++)
            if (!strcmp(s->params[k].name, s->params[j].name)) {
                snprintf(err, errlen, "parameter '%s' is given twice: give each parameter once",
                         s->params[j].name);
                return -1;
            }
    }
    if (c->budget) {
        if (units_parse_bytes(c->budget, &s->memory_budget_bytes) ||
            s->memory_budget_bytes <= 0) {
            snprintf(err, errlen, "--memory-budget '%s' is not a size above 0 (e.g. 8GiB, "
                     "512MiB)", c->budget);
            return -1;
        }
    } else {
        s->memory_budget_bytes = NAN;
    }
    if (c->probe_args && !c->find_max) {
        snprintf(err, errlen, "--probe-args applies to --find-max probes only");
        return -1;
    }
    s->objective_given = s->objective_spec != NULL;
    if (!s->objective_spec)
        s->objective_spec = "min:total";
    if (sweep_objective_parse(s->objective_spec, &s->objective, err, errlen))
        return -1;
    if (c->seed) {
        long seed;
        if (units_parse_long(c->seed, 0, 0x7fffffffL, &seed)) {
            snprintf(err, errlen, "--seed '%s' is not a whole number from 0 to 2147483647",
                     c->seed);
            return -1;
        }
        s->seed = (uint64_t)seed;
    } else {
        uint32_t r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (uint32_t)getpid();
        s->seed = r & 0x7fffffffu;
    }
    s->interleave = !c->no_interleave;
    if (c->find_max) {
        s->mode = SWEEP_FIND_MAX;
        if (cfg->runs == 0)
            cfg->runs = 1; /* a probe is a short run unless told */
        return build_find_max(c, cfg, err, errlen);
    }
    if (c->n_commands) {
        s->mode = SWEEP_COMMANDS;
        return build_commands(c, cfg, err, errlen);
    }
    s->mode = SWEEP_MATRIX;
    return build_matrix(c, cfg, err, errlen);
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_cli c = {0};
    struct run_options o;
    char err[1024];
    struct cli_option rows[SWEEP_ROWS];
    sweep_rows(&c, rows);
    const struct cli_parser own = {.verb = "sweep", .options = rows, .usage = usage,
                                   .tail = tail};
    int rc = run_options_parse_with(&own, argc, argv, &o, err, sizeof err);
    int status = 0;
    if (rc == RUN_OPTIONS_HELP)
        goto out;
    /* A workflow file is measured by mlbench run; sweeping its parameters is not built yet. */
    if (rc == 0 && (o.params.n || (o.run.argc >= 1 && workflow_is_file(o.run.argv[0])))) {
        snprintf(err, sizeof err, "mlbench sweep measures commands, not workflow files (%s): "
                 "sweep the command a stage runs instead (-L NAME V1,V2 -- CMD ... {NAME}), or "
                 "run the file with mlbench run --param once per value",
                 o.params.n ? "--param" : o.run.argv[0]);
        rc = -1;
    }
    if (rc == 0)
        rc = build(&c, &o, err, sizeof err);
    if (rc < 0) {
        log_error("%s", err);
        status = 2;
        goto out;
    }
    log_set_quiet(o.session.quiet);
    json_t *doc;
    char *path;
    status = sweep_run(&c.spec, &doc, &path);
    if (doc) {
        if (o.json)
            json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII), putchar('\n');
        else if (!o.session.quiet)
            export_sweep_print(stdout, doc, path);
    }
    fflush(stdout);
    json_decref(doc);
    free(path);
out:
    for (size_t i = 0; i < c.n_splits; i++)
        cmdline_free(&c.splits[i]);
    free(c.splits);
    free(c.defs);
    free(c.commands);
    free(c.names);
    free(c.spec.constraint_specs);
    free(c.spec.oom_patterns);
    run_options_free(&o);
    sweep_spec_free(&c.spec);
    return status;
}
