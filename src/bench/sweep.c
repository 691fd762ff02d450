/* sweep: runs the points of a sweep and writes its document (see sweep.h). */
#include "bench/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "measure/oom.h"
#include "measure/oom_cgroup.h"
#include "measure/runner.h"
#include "result/result.h"
#include "store/store.h"
#include "store/sweeps.h"
#include "util/fsx.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/units.h"
#include "util/xalloc.h"

/* Where a point stands. */
struct point {
    struct run_config cfg;   /* the common options with this point's command */
    char *label;             /* "LABEL NAME" or NAME */
    char *name;
    char **argv;             /* find-max: owned; matrix/commands: the spec's */
    char *prepare, *cleanup; /* find-max: owned */
    json_t *parameters;      /* borrowed (matrix/commands) or owned (find-max) */
    int bench_index;         /* in the session, -1 when it could not be added */
    const char *status;      /* NULL while it runs; then a status of docs/sweep.md */
    char detail[512];
    bool finished;
    json_t *result;          /* its document once finished (owned) */
    char *result_path;
    long long value;         /* find-max: the probed value */
    size_t index;            /* in the sweep */
};

struct sweep {
    const struct sweep_spec *spec;
    struct bench *bench;
    struct point **points;
    size_t n_points;
    json_t *rounds;          /* array of arrays of point indexes */
    char id[48];
    int64_t created_unix_ns;
    bool objective_checked;  /* the first point's first run told whether the objective exists */
    int status;
};

void sweep_spec_free(struct sweep_spec *s)
{
    for (size_t i = 0; i < s->n_points; i++) {
        struct sweep_point_def *p = &s->points[i];
        free(p->name);
        for (int k = 0; k < p->argc; k++)
            free(p->argv[k]);
        free(p->argv);
        free(p->prepare);
        free(p->cleanup);
        json_decref(p->parameters);
    }
    free(s->points);
    for (size_t i = 0; i < s->n_params; i++)
        sweep_param_free(&s->params[i]);
    free(s->params);
    free(s->constraints);
    for (int i = 0; i < s->n_probe_args; i++)
        free(s->probe_args[i]);
    free(s->probe_args);
    memset(s, 0, sizeof *s);
}

/* ---- figures ----------------------------------------------------------------------------- */

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jcount(double v)
{
    return isfinite(v) && fabs(v) < 1e15 ? json_integer((json_int_t)v) : json_null();
}

/* The resources entry of metric in a resources array, summed over its labels (GPUs) for
 * what: "peak" or "mean" (mean: averaged over the labels); NAN without one. */
static double resource(const json_t *resources, const char *metric, const char *what, bool sum)
{
    double total = NAN;
    size_t i, n = 0;
    const json_t *r;
    json_array_foreach(resources, i, r) {
        const char *m = json_string_value(json_object_get(r, "metric"));
        double v = num(r, what);
        if (!m || strcmp(m, metric) || isnan(v))
            continue;
        total = isnan(total) ? v : total + v;
        n++;
    }
    return n && !sum ? total / (double)n : total;
}

json_t *sweep_figures(const json_t *result)
{
    const json_t *summary = json_object_get(result, "summary");
    const json_t *wall = json_object_get(summary, "wall_ns");
    json_t *f = json_object();
    json_object_set_new(f, "total", json_pack("{s:o, s:o, s:o, s:o}",
        "median_ns", jnum(num(wall, "median")), "ci_low_ns", jnum(num(wall, "ci_low")),
        "ci_high_ns", jnum(num(wall, "ci_high")),
        "n", jcount(num(wall, "n"))));

    json_t *stages = json_array();
    const char *bottleneck = json_string_value(
        json_object_get(json_object_get(result, "analysis"), "bottleneck"));
    json_t *bottle = json_null();
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(summary, "stages"), i, s) {
        const char *name = json_string_value(json_object_get(s, "name"));
        if (!name)
            continue;
        double median = num(json_object_get(s, "active_ns"), "median");
        json_array_append_new(stages, json_pack("{s:s, s:o, s:o, s:o}", "name", name,
            "depth", jnum(num(s, "depth")), "median_ns", jnum(median),
            "share", jnum(num(s, "share"))));
        if (bottleneck && !strcmp(bottleneck, name) && json_is_null(bottle)) {
            const char *rule = NULL;
            size_t k;
            const json_t *v;
            json_array_foreach(json_object_get(json_object_get(result, "analysis"), "verdicts"),
                               k, v) {
                const char *st = json_string_value(json_object_get(v, "stage"));
                if (st && !strcmp(st, name))
                    rule = json_string_value(json_object_get(v, "rule"));
            }
            json_decref(bottle);
            bottle = json_pack("{s:s, s:s?, s:o, s:o}", "stage", name, "verdict", rule,
                               "share", jnum(num(s, "share")), "median_ns", jnum(median));
        }
    }
    json_object_set_new(f, "stages", stages);
    json_object_set_new(f, "bottleneck", bottle);

    json_t *counters = json_array();
    const json_t *c;
    json_array_foreach(json_object_get(summary, "counters"), i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (!name)
            continue;
        bool count = json_is_true(json_object_get(c, "count"));
        const char *stage = json_string_value(json_object_get(c, "stage"));
        double rate = stage ? num(c, "stage_rate_per_s_median") : NAN;
        if (isnan(rate))
            rate = num(c, "rate_per_s_median");
        json_array_append_new(counters, json_pack("{s:s, s:s?, s:o, s:o, s:b}", "name", name,
            "stage", stage, "rate_per_s", count ? jnum(rate) : json_null(),
            "last_median", jnum(num(json_object_get(c, "last"), "median")), "count", count));
    }
    json_object_set_new(f, "counters", counters);

    const json_t *res = json_object_get(summary, "resources");
    double peak = resource(res, "process_resident_bytes", "peak", false);
    if (isnan(peak))
        peak = num(json_object_get(summary, "max_rss_bytes"), "max");
    json_object_set_new(f, "peak_memory_bytes", jnum(peak));
    json_object_set_new(f, "gpu_memory_peak_bytes",
                        jnum(resource(res, "gpu_process_memory_bytes", "peak", true)));
    json_object_set_new(f, "gpu_utilization_mean",
                        jnum(resource(res, "gpu_utilization_ratio", "mean", false)));
    json_object_set_new(f, "cost_per_run",
        jnum(num(json_object_get(json_object_get(result, "cost"), "run"), "median")));
    return f;
}

/* ---- points ------------------------------------------------------------------------------ */

static struct point *add_point(struct sweep *sw, const char *name, char **argv, int argc,
                               char *prepare, char *cleanup, json_t *parameters)
{
    const struct run_config *common = sw->spec->cfg;
    struct point *p = xcalloc(1, sizeof *p);
    p->cfg = *common;
    p->cfg.argv = argv;
    p->cfg.argc = argc;
    p->cfg.prepare = prepare;
    p->cfg.cleanup = cleanup;
    p->cfg.output = NULL; /* -o is the sweep document's */
    p->cfg.params = NULL;
    p->cfg.n_params = 0;
    p->name = xstrdup(name);
    p->label = common->label ? xasprintf("%s %s", common->label, name) : xstrdup(name);
    p->cfg.label = p->label;
    p->argv = argv;
    p->parameters = parameters;
    p->bench_index = bench_add(sw->bench, &p->cfg, name);
    p->index = sw->n_points;
    sw->points = xreallocarray(sw->points, sw->n_points + 1, sizeof *sw->points);
    sw->points[sw->n_points++] = p;
    return p;
}

static void point_free(struct point *p, bool owned)
{
    if (owned) {
        for (int i = 0; p->argv && p->argv[i]; i++)
            free(p->argv[i]);
        free(p->argv);
        free(p->prepare);
        free(p->cleanup);
        json_decref(p->parameters);
    }
    free(p->name);
    free(p->label);
    json_decref(p->result);
    free(p->result_path);
    free(p);
}

/* Whether the run ran out of memory (measure/oom.c); reason says how that was recognised.
 * kills: oom_kill events of mlbench's cgroup during the step, -1 unknown. */
static bool ran_out_of_memory(const struct sweep *sw, const struct repetition *rep, long kills,
                              char *reason, size_t len)
{
    const struct run_outcome *o = &rep->outcome;
    struct oom_evidence e = {
        .status = o->status, .exit_code = o->exit_code, .signal = o->signal,
        .stderr_tail = o->stderr_tail, .cgroup_oom_kills = kills,
        .patterns = (const char *const *)sw->spec->oom_patterns,
        .n_patterns = sw->spec->n_oom_patterns,
    };
    return !rep->prepare_error && oom_classify(&e, reason, len);
}

/* After each measured run of a point: out of memory stops it; the first point's first run
 * tells whether the objective names something the workload sends. */
static void after_run(struct sweep *sw, struct point *p, const struct repetition *rep,
                      long kills)
{
    char reason[300];
    if (rep && !p->status && ran_out_of_memory(sw, rep, kills, reason, sizeof reason)) {
        p->status = "out_of_memory";
        snprintf(p->detail, sizeof p->detail, "%s", reason);
        bench_stop(sw->bench, (size_t)p->bench_index);
    }
    const struct sweep_objective *o = &sw->spec->objective;
    if (sw->objective_checked || !rep || rep->warmup || rep->outcome.status != RUN_OK ||
        (o->figure != SWEEP_FIG_COUNTER && o->figure != SWEEP_FIG_STAGE))
        return;
    sw->objective_checked = true;
    json_t *names = json_pack("{s:[], s:[]}", "counters", "stages");
    for (size_t i = 0; i < rep->stages.n_counters; i++)
        json_array_append_new(json_object_get(names, "counters"), json_pack("{s:s}", "name",
            event_log_str(&rep->log, rep->stages.counters[i].name)));
    for (size_t i = 0; i < rep->stages.n_stages; i++)
        json_array_append_new(json_object_get(names, "stages"), json_pack("{s:s}", "name",
            event_log_str(&rep->log, rep->stages.stages[i].name)));
    if (!sweep_objective_known(o, names)) {
        struct strbuf have = {0};
        const json_t *list = json_object_get(names, o->figure == SWEEP_FIG_COUNTER ? "counters"
                                                                                   : "stages");
        size_t i;
        const json_t *e;
        json_array_foreach(list, i, e)
            if (i < 20)
                strbuf_printf(&have, "%s%s", i ? ", " : "",
                              json_string_value(json_object_get(e, "name")));
        log_error("--objective %s: the first point (%s) sent no %s '%s' (it sent %s): name one it "
                  "sends; the sweep stops", sw->spec->objective_spec, p->name,
                  o->figure == SWEEP_FIG_COUNTER ? "counter" : "stage", o->name,
                  have.s ? have.s : "none");
        strbuf_free(&have);
        sw->status = 2;
    }
    json_decref(names);
}

static void run_point(struct sweep *sw, struct point *p)
{
    if (p->bench_index < 0 || bench_done(sw->bench, (size_t)p->bench_index))
        return;
    /* The workload runs in mlbench's cgroup: an OOM kill during the step shows there. */
    long before = oom_cgroup_kills(0);
    const struct repetition *rep = bench_step(sw->bench, (size_t)p->bench_index);
    long after = oom_cgroup_kills(0);
    after_run(sw, p, rep, before >= 0 && after >= 0 ? after - before : -1);
}

/* The status of a point whose runs are over, from its result. */
static void settle(struct sweep *sw, struct point *p)
{
    const struct bench_result *r = bench_result(sw->bench, (size_t)p->bench_index);
    if (p->status)
        return;
    size_t measured = 0, ok = 0, failed = 0;
    const struct repetition *first_bad = NULL;
    bool timeout = false, interrupted = false;
    for (size_t i = 0; i < r->n_reps; i++) {
        const struct repetition *rep = &r->reps[i];
        bool bad = rep->outcome.status != RUN_OK || rep->prepare_error;
        if (rep->outcome.status == RUN_TIMEOUT)
            timeout = true;
        if (rep->outcome.status == RUN_INTERRUPTED)
            interrupted = true;
        if (bad && !first_bad)
            first_bad = rep;
        if (rep->warmup)
            continue;
        measured++;
        ok += !bad;
        failed += bad;
    }
    char how[320] = "";
    if (first_bad) {
        if (first_bad->prepare_error)
            snprintf(how, sizeof how, "%s", first_bad->prepare_error);
        else
            bench_describe_outcome(&first_bad->outcome, how, sizeof how);
    }
    if (r->n_reps == 0) {
        p->status = "not_run";
    } else if (interrupted) {
        p->status = "interrupted";
        snprintf(p->detail, sizeof p->detail, "interrupted after %zu measured runs", ok);
    } else if (timeout) {
        p->status = "timeout";
        snprintf(p->detail, sizeof p->detail, "%zu of %zu runs timed out (--timeout %.6gs)",
                 failed, measured, p->cfg.timeout_s);
    } else if (first_bad) {
        p->status = "failed";
        snprintf(p->detail, sizeof p->detail, "%zu of %zu runs failed: %.300s", failed,
                 measured ? measured : 1, how);
    } else {
        p->status = "ok";
    }
}

/* Summarises, writes and judges a point whose runs are over. */
static void finish_point(struct sweep *sw, struct point *p)
{
    if (p->finished || p->bench_index < 0)
        return;
    p->finished = true;
    settle(sw, p);
    if (!strcmp(p->status, "not_run"))
        return;
    json_t *extra = json_pack("{s:{s:s, s:I, s:s, s:O}}", "sweep", "id", sw->id,
                              "point", (json_int_t)p->index, "name", p->name,
                              "parameters", p->parameters);
    struct bench_output out;
    int status = bench_finish(sw->bench, (size_t)p->bench_index, extra, &out);
    json_decref(extra);
    if (status == 3)
        sw->status = status;
    else if ((status == 1 || status == 127) && sw->status == 0 &&
             strcmp(p->status, "out_of_memory")) /* a point not found failed: the others ran */
        sw->status = 1;
    p->result = out.doc ? json_incref(out.doc) : NULL;
    p->result_path = out.path ? xstrdup(out.path) : NULL;
    bench_output_free(&out);
    if (p->result && !strcmp(p->status, "ok") && isfinite(sw->spec->memory_budget_bytes)) {
        json_t *f = sweep_figures(p->result);
        double peak = sweep_figure_value(f, SWEEP_FIG_GPU_MEMORY, NULL);
        const char *what = "GPU memory";
        if (isnan(peak)) {
            peak = sweep_figure_value(f, SWEEP_FIG_MEMORY, NULL);
            what = "memory";
        }
        json_decref(f);
        if (peak > sw->spec->memory_budget_bytes) {
            char have[32], budget[32];
            p->status = "over_budget";
            snprintf(p->detail, sizeof p->detail, "peak %s %s, over --memory-budget %s", what,
                     units_bytes(peak, have, sizeof have),
                     units_bytes(sw->spec->memory_budget_bytes, budget, sizeof budget));
        }
    }
}

/* ---- the modes --------------------------------------------------------------------------- */

static void run_matrix(struct sweep *sw)
{
    const struct sweep_spec *spec = sw->spec;
    for (size_t i = 0; i < spec->n_points; i++) {
        const struct sweep_point_def *d = &spec->points[i];
        add_point(sw, d->name, d->argv, d->argc, d->prepare, d->cleanup, d->parameters);
    }
    for (size_t i = 0; i < sw->n_points; i++)
        if (sw->points[i]->bench_index < 0) {
            sw->status = 2;
            return;
        }
    if (!spec->interleave) {
        for (size_t i = 0; i < sw->n_points && !sw->status && !runner_interrupted(); i++) {
            struct point *p = sw->points[i];
            while (!bench_done(sw->bench, (size_t)p->bench_index) && !sw->status)
                run_point(sw, p);
        }
        return;
    }
    uint64_t state = spec->seed;
    size_t *order = xcalloc(sw->n_points, sizeof *order);
    for (;;) {
        bool any = false;
        for (size_t i = 0; i < sw->n_points; i++)
            any = any || !bench_done(sw->bench, (size_t)sw->points[i]->bench_index);
        if (!any || sw->status || runner_interrupted())
            break;
        sweep_shuffle(order, sw->n_points, &state);
        json_t *round = json_array();
        for (size_t k = 0; k < sw->n_points && !sw->status && !runner_interrupted(); k++) {
            struct point *p = sw->points[order[k]];
            if (bench_done(sw->bench, (size_t)p->bench_index))
                continue;
            json_array_append_new(round, json_integer((json_int_t)order[k]));
            run_point(sw, p);
        }
        json_array_append_new(sw->rounds, round);
    }
    free(order);
}

/* The template's words with {NAME} := value, and the probe arguments after them. */
static char **probe_argv(const struct sweep_spec *spec, const struct sweep_param *param,
                         int *argc)
{
    const struct run_config *cfg = spec->cfg;
    size_t idx = 0;
    char err[512];
    char **argv = xcalloc((size_t)(cfg->argc + spec->n_probe_args + 1), sizeof *argv);
    int n = 0;
    for (int i = 0; i < cfg->argc; i++) {
        argv[n] = sweep_substitute(cfg->argv[i], "the command", param, 1, &idx, NULL, err,
                                   sizeof err);
        if (!argv[n]) /* the command line checked the template: this cannot fail */
            argv[n] = xstrdup(cfg->argv[i]);
        n++;
    }
    for (int i = 0; i < spec->n_probe_args; i++)
        argv[n++] = xstrdup(spec->probe_args[i]);
    *argc = n;
    return argv;
}

static char *probe_string(const char *s, const struct sweep_param *param)
{
    size_t idx = 0;
    char err[512];
    if (!s)
        return NULL;
    char *out = sweep_substitute(s, "--prepare", param, 1, &idx, NULL, err, sizeof err);
    return out ? out : xstrdup(s);
}

static bool fits(const struct point *p)
{
    return p->status && !strcmp(p->status, "ok");
}

static void run_find_max(struct sweep *sw, json_t *probes)
{
    const struct sweep_spec *spec = sw->spec;
    struct sweep_search search = spec->search;
    while (search.next > 0 && !sw->status && !runner_interrupted()) {
        char value[32];
        snprintf(value, sizeof value, "%lld", search.next);
        char *values[] = {value};
        struct sweep_param param = {.name = (char *)spec->search_name, .values = values, .n = 1};
        int argc;
        char **argv = probe_argv(spec, &param, &argc);
        char *name = xasprintf("%s=%s", spec->search_name, value);
        struct point *p = add_point(sw, name, argv, argc, probe_string(spec->cfg->prepare, &param),
                                    probe_string(spec->cfg->cleanup, &param),
                                    json_pack("{s:s}", spec->search_name, value));
        free(name);
        p->prepare = (char *)p->cfg.prepare;
        p->cleanup = (char *)p->cfg.cleanup;
        p->value = search.next;
        if (p->bench_index < 0) {
            sw->status = 2;
            break;
        }
        while (!bench_done(sw->bench, (size_t)p->bench_index) && !sw->status)
            run_point(sw, p);
        finish_point(sw, p);
        if (runner_interrupted() || !strcmp(p->status, "interrupted"))
            break;
        bool ok = fits(p);
        json_t *f = p->result ? sweep_figures(p->result) : json_object();
        json_t *tp = json_null();
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(f, "counters"), i, c) /* the first throughput */
            if (json_is_null(tp) && json_is_number(json_object_get(c, "rate_per_s")))
                tp = json_pack("{s:O, s:O}", "name", json_object_get(c, "name"),
                               "rate_per_s", json_object_get(c, "rate_per_s"));
        json_array_append_new(probes, json_pack("{s:I, s:I, s:b, s:s?, s:O?, s:o}",
            "value", (json_int_t)search.next, "point", (json_int_t)(sw->n_points - 1),
            "fits", ok, "reason", ok ? NULL : p->detail[0] ? p->detail : p->status,
            "peak_memory_bytes", json_object_get(f, "peak_memory_bytes"), "throughput", tp));
        json_decref(f);
        if (!ok && strcmp(p->status, "out_of_memory") && strcmp(p->status, "over_budget"))
            log_warn("%s=%lld %s (%s): counted as not fitting", spec->search_name, search.next,
                     p->status, p->detail);
        sweep_search_report(&search, p->value, ok);
    }
}

/* Least squares of peak memory against the value over the probes that fit. */
static json_t *memory_fit(const json_t *probes, double budget)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
    size_t i;
    const json_t *pr;
    json_array_foreach(probes, i, pr) {
        double x = num(pr, "value"), y = num(pr, "peak_memory_bytes");
        if (!json_is_true(json_object_get(pr, "fits")) || isnan(x) || isnan(y))
            continue;
        n++, sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y;
    }
    double den = n * sxx - sx * sx;
    if (n < 2 || den <= 0)
        return json_null();
    double slope = (n * sxy - sx * sy) / den, icpt = (sy - slope * sx) / n;
    double ss_tot = syy - sy * sy / n;
    double ss_res = syy - icpt * sy - slope * sxy;
    double r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : NAN;
    double predicted = isfinite(budget) && slope > 0 ? floor((budget - icpt) / slope) : NAN;
    return json_pack("{s:o, s:o, s:o, s:o}", "slope_bytes", jnum(slope), "intercept_bytes",
                     jnum(icpt), "r2", jnum(r2), "predicted_max", jnum(predicted));
}

/* ---- the document ------------------------------------------------------------------------ */

static json_t *point_json(const struct sweep *sw, size_t i)
{
    const struct point *p = sw->points[i];
    const struct sweep_spec *spec = sw->spec;
    json_t *argv = json_array();
    for (int k = 0; k < p->cfg.argc; k++)
        json_array_append_new(argv, json_string(p->cfg.argv[k]));
    json_t *figures = p->result ? sweep_figures(p->result) : json_object();
    double objective = sweep_figure_value(figures, spec->objective.figure, spec->objective.name);
    json_t *failures = json_array();
    for (size_t k = 0; k < spec->n_constraints; k++) {
        char why[512];
        if (!sweep_constraint_met(&spec->constraints[k], figures, why, sizeof why))
            json_array_append_new(failures, json_string(why));
    }
    const char *path = p->result_path;
    size_t store_len = strlen(spec->cfg->store);
    if (path && !strncmp(path, spec->cfg->store, store_len) && path[store_len] == '/')
        path += store_len + 1;
    json_t *warnings = p->result ? json_object_get(p->result, "warnings") : NULL;
    return json_pack("{s:I, s:s, s:O, s:o, s:s, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o, s:b, "
                     "s:o, s:o}",
        "index", (json_int_t)i, "name", p->name, "parameters", p->parameters, "command", argv,
        "status", p->status ? p->status : "not_run",
        "status_detail", p->detail[0] ? p->detail : NULL,
        "result_id", p->result ? json_string_value(json_object_get(p->result, "id")) : NULL,
        "result_path", p->result ? path : NULL,
        "runs_measured", jcount(num(json_object_get(p->result, "summary"), "runs_measured")),
        "runs_ok", jcount(num(json_object_get(p->result, "summary"), "runs_ok")),
        "figures", figures, "objective_value", jnum(objective),
        "constraints_met", json_array_size(failures) == 0, "constraint_failures", failures,
        "warnings", warnings ? json_incref(warnings) : json_array());
}

static json_t *build_document(struct sweep *sw, json_t *find_max)
{
    const struct sweep_spec *spec = sw->spec;
    const struct run_config *cfg = spec->cfg;
    json_t *price = json_null(); /* as the first priced result says */
    for (size_t i = 0; i < sw->n_points && json_is_null(price); i++) {
        const json_t *cost = json_object_get(sw->points[i]->result, "cost");
        if (json_is_number(json_object_get(cost, "price_per_hour")))
            price = json_pack("{s:O, s:O}", "per_hour", json_object_get(cost, "price_per_hour"),
                              "currency", json_object_get(cost, "currency"));
    }
    json_t *points = json_array();
    json_t *winner = json_null();
    double best = NAN;
    size_t ran = 0;
    for (size_t i = 0; i < sw->n_points; i++) {
        json_t *pj = point_json(sw, i);
        json_array_append_new(points, pj);
        ran += sw->points[i]->result != NULL;
        double v = num(pj, "objective_value");
        if (!fits(sw->points[i]) || !json_is_true(json_object_get(pj, "constraints_met")) ||
            isnan(v))
            continue;
        if (isnan(best) || (spec->objective.maximise ? v > best : v < best)) {
            best = v;
            json_decref(winner);
            winner = json_pack("{s:I, s:s}", "index", (json_int_t)i, "name", sw->points[i]->name);
        }
    }
    if (spec->mode == SWEEP_FIND_MAX && !spec->objective_given) {
        /* The answer of --find-max is the largest value that fits. */
        json_decref(winner);
        winner = json_null();
        long long largest = -1;
        for (size_t i = 0; i < sw->n_points; i++)
            if (fits(sw->points[i]) && sw->points[i]->value > largest) {
                largest = sw->points[i]->value;
                json_decref(winner);
                winner = json_pack("{s:I, s:s, s:s+}", "index", (json_int_t)i, "name",
                                   sw->points[i]->name, "reason", "the largest value that fits: ",
                                   sw->points[i]->name);
            }
    } else if (!json_is_null(winner)) {
        char desc[300], val[48];
        sweep_objective_describe(&spec->objective, desc, sizeof desc);
        enum sweep_figure f = spec->objective.figure;
        if (f == SWEEP_FIG_TOTAL || f == SWEEP_FIG_STAGE)
            units_duration(best, val, sizeof val);
        else if (f == SWEEP_FIG_MEMORY || f == SWEEP_FIG_GPU_MEMORY)
            units_bytes(best, val, sizeof val);
        else if (f == SWEEP_FIG_COST)
            snprintf(val, sizeof val, "%.3g %s", best,
                     json_string_value(json_object_get(price, "currency"))
                         ? json_string_value(json_object_get(price, "currency")) : "");
        else
            snprintf(val, sizeof val, "%.6g", best);
        json_object_set_new(winner, "reason", json_sprintf("%s (%s)", desc, val));
    }
    json_t *command = json_null();
    if (spec->mode != SWEEP_COMMANDS) {
        command = json_array();
        for (int i = 0; i < cfg->argc; i++)
            json_array_append_new(command, json_string(cfg->argv[i]));
    }
    json_t *params = json_array();
    for (size_t i = 0; i < spec->n_params; i++) {
        json_t *values = json_array();
        for (size_t k = 0; k < spec->params[i].n; k++)
            json_array_append_new(values, json_string(spec->params[i].values[k]));
        json_array_append_new(params, json_pack("{s:s, s:o, s:b}", "name", spec->params[i].name,
                                                "values", values, "numeric",
                                                spec->params[i].numeric));
    }
    if (spec->mode == SWEEP_FIND_MAX) {
        json_t *values = json_array();
        for (size_t i = 0; i < sw->n_points; i++)
            json_array_append_new(values, json_sprintf("%lld", sw->points[i]->value));
        json_array_append_new(params, json_pack("{s:s, s:o, s:b}", "name", spec->search_name,
                                                "values", values, "numeric", 1));
    }
    json_t *constraints = json_array();
    for (size_t i = 0; i < spec->n_constraints; i++)
        json_array_append_new(constraints, json_pack("{s:s}", "spec", spec->constraint_specs[i]));
    char desc[300];
    sweep_objective_describe(&spec->objective, desc, sizeof desc);
    static const char *const figure_names[] = {"total", "stage", "counter", "memory",
                                               "gpu_memory", "cost"};
    char created[32];
    time_t secs = (time_t)(sw->created_unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *status = runner_interrupted() ? "interrupted"
                       : ran == 0 || sw->status == 2 ? "failed" : "complete";
    static const char *const modes[] = {"matrix", "commands", "find-max"};
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:I, s:O, "
                     "s:{s:s, s:s, s:s, s:s?, s:s}, s:o, s:o, s:o, s:o, s:o}",
        "schema", STORE_SWEEP_SCHEMA, "id", sw->id, "created", created, "status", status,
        "mode", modes[spec->mode], "command", command, "parameters", params,
        "interleave", spec->interleave && spec->mode != SWEEP_FIND_MAX,
        "seed", (json_int_t)(spec->seed & 0x7fffffffffffffffULL), "rounds", sw->rounds,
        "objective", "spec", spec->objective_spec, "direction",
        spec->objective.maximise ? "max" : "min", "figure", figure_names[spec->objective.figure],
        "name", spec->objective.name[0] ? spec->objective.name : NULL, "description", desc,
        "constraints", constraints, "price", price, "points", points, "winner", winner,
        "find_max", find_max ? find_max : json_null());
}

static int write_document(const struct sweep *sw, json_t *doc, char **path_out)
{
    char err[1024];
    char *dir = xasprintf("%s/%s", sw->spec->cfg->store, STORE_SWEEPS_DIR);
    char *path = xasprintf("%s/%s.json", dir, sw->id);
    int status = 0;
    if (fsx_mkdirs(dir) < 0 || result_write_json(doc, path, err, sizeof err) < 0) {
        log_error("cannot write the sweep document %s (the points' results are in the store)",
                  path);
        status = 3;
        const char *tmp = getenv("TMPDIR");
        free(path);
        path = xasprintf("%s/mlbench-sweep-%s.json", tmp && *tmp ? tmp : "/tmp", sw->id);
        if (result_write_json(doc, path, err, sizeof err) == 0) {
            log_error("the sweep document was written to %s instead", path);
        } else {
            free(path);
            path = NULL;
        }
    }
    if (sw->spec->cfg->output && result_write_json(doc, sw->spec->cfg->output, err, sizeof err)) {
        log_error("%s", err);
        status = 3;
    }
    free(dir);
    *path_out = path;
    return status;
}

int sweep_run(const struct sweep_spec *spec, json_t **doc_out, char **path_out)
{
    struct sweep sw = {.spec = spec, .rounds = json_array()};
    *doc_out = NULL;
    *path_out = NULL;
    result_new_id(sw.id, sizeof sw.id, &sw.created_unix_ns);
    if (store_where(spec->cfg->store, NULL, NULL, 0) != 0) {
        /* its points refer to result files beside the sweep document */
        log_error("a sweep is kept in a directory store: give --store DIR (mlbench store push "
                  "sends its results to the shared store afterwards)");
        json_decref(sw.rounds);
        return 2;
    }
    int status = bench_open(spec->cfg, &sw.bench);
    if (status != 0) {
        bench_close(sw.bench);
        json_decref(sw.rounds);
        return status;
    }
    if (!spec->cfg->quiet)
        log_info("sweep %s: %s", sw.id,
                 spec->mode == SWEEP_FIND_MAX ? "the largest value that fits, probe by probe"
                 : spec->interleave ? "interleaved: each round runs every point once, in a "
                                      "shuffled order"
                                    : "one point after another (--no-interleave)");
    json_t *probes = NULL;
    if (spec->mode == SWEEP_FIND_MAX) {
        probes = json_array();
        run_find_max(&sw, probes);
    } else {
        run_matrix(&sw);
    }
    bench_end_runs(sw.bench);
    bool ran = false; /* a point made a run: its result and the document are written */
    for (size_t i = 0; i < sw.n_points; i++)
        ran = ran || (sw.points[i]->bench_index >= 0 &&
                      bench_result(sw.bench, (size_t)sw.points[i]->bench_index)->n_reps > 0);
    for (size_t i = 0; ran && i < sw.n_points; i++)
        finish_point(&sw, sw.points[i]);
    json_t *find_max = NULL;
    if (probes) {
        long long largest = -1, first_fail = -1;
        size_t i;
        const json_t *pr;
        json_array_foreach(probes, i, pr) {
            long long v = (long long)num(pr, "value");
            if (json_is_true(json_object_get(pr, "fits")) && v > largest)
                largest = v;
            else if (!json_is_true(json_object_get(pr, "fits")) &&
                     (first_fail < 0 || v < first_fail))
                first_fail = v;
        }
        find_max = json_pack("{s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:O, s:o}",
            "parameter", spec->search_name, "low", (json_int_t)spec->search.lo,
            "high", (json_int_t)spec->search.hi, "pow2", spec->search.pow2,
            "memory_budget_bytes", jnum(spec->memory_budget_bytes),
            "largest_fit", largest >= 0 ? json_integer(largest) : json_null(),
            "first_failure", first_fail >= 0 ? json_integer(first_fail) : json_null(),
            "probes", probes, "memory_fit", memory_fit(probes, spec->memory_budget_bytes));
        json_decref(probes);
    }
    if (!ran) { /* nothing ran (bad input, or interrupted at once): no document */
        json_decref(find_max);
        status = sw.status ? sw.status : runner_interrupted() ? 128 + runner_interrupted() : 0;
    } else {
        json_t *doc = build_document(&sw, find_max);
        status = write_document(&sw, doc, path_out);
        *doc_out = doc;
        if (status == 0)
            status = sw.status;
        if (runner_interrupted())
            status = 128 + runner_interrupted();
    }
    bool owned = spec->mode == SWEEP_FIND_MAX;
    bench_close(sw.bench);
    for (size_t i = 0; i < sw.n_points; i++)
        point_free(sw.points[i], owned);
    free(sw.points);
    json_decref(sw.rounds);
    return status;
}
