/* sweep: runs the points of a sweep and writes its document (see sweep.h). */
#include "session/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/session.h"
#include "analysis/compare.h"
#include "doc/result.h"
#include "doc/sweep.h"
#include "measure/oom.h"
#include "measure/oom_cgroup.h"
#include "measure/runner.h"
#include "result/result.h"
#include "store/store.h"
#include "store/sweeps.h"
#include "util/fsx.h"
#include "util/jsonx.h"
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
    int session_index;         /* in the session, -1 when it could not be added */
    const char *status;      /* NULL while it runs; then a status of docs/sweep.md */
    char detail[512];
    bool finished;
    json_t *result;          /* its document once finished (owned) */
    struct doc_result *doc;  /* result read, or NULL */
    struct doc_sweep_figures figures; /* from its result (every figure unknown without one) */
    char *result_path;
    long long value;         /* find-max: the probed value */
    size_t index;            /* in the sweep */
};

struct sweep {
    const struct sweep_spec *spec;
    struct session *session;
    struct point **points;
    size_t n_points;
    json_t *rounds;          /* array of arrays of point indexes */
    char id[48];
    int64_t created_unix_ns;
    bool objective_checked;  /* the first point's first run told whether the objective exists */
    int status;
    struct doc_sweep_probe *probes; /* find-max: in the order probed */
    size_t n_probes;
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
    p->name = xstrdup(name);
    p->label = common->label ? xasprintf("%s %s", common->label, name) : xstrdup(name);
    p->cfg.label = p->label;
    p->argv = argv;
    p->parameters = parameters;
    doc_sweep_figures_read(NULL, &p->figures);
    p->session_index = session_add(sw->session, &p->cfg, name);
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
    doc_sweep_figures_free(&p->figures);
    doc_result_free(p->doc);
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
        session_stop(sw->session, (size_t)p->session_index);
    }
    const struct sweep_objective *o = &sw->spec->objective;
    if (sw->objective_checked || !rep || rep->warmup || rep->outcome.status != RUN_OK ||
        (o->figure != SWEEP_FIG_COUNTER && o->figure != SWEEP_FIG_STAGE))
        return;
    sw->objective_checked = true;
    /* What the run sent, by name: the figures the objective can name. */
    struct doc_sweep_figures sent;
    doc_sweep_figures_read(NULL, &sent);
    sent.counters = xcalloc(rep->stages.n_counters + 1, sizeof *sent.counters);
    for (size_t i = 0; i < rep->stages.n_counters; i++) {
        const char *name = event_log_str(&rep->log, rep->stages.counters[i].name);
        if (name)
            sent.counters[sent.n_counters++].name = name;
    }
    sent.stages = xcalloc(rep->stages.n_stages + 1, sizeof *sent.stages);
    for (size_t i = 0; i < rep->stages.n_stages; i++) {
        const char *name = event_log_str(&rep->log, rep->stages.stages[i].name);
        if (name)
            sent.stages[sent.n_stages++].name = name;
    }
    if (!sweep_objective_known(o, &sent)) {
        struct strbuf have = STRBUF_INIT;
        bool counters = o->figure == SWEEP_FIG_COUNTER;
        size_t n = counters ? sent.n_counters : sent.n_stages;
        for (size_t i = 0; i < n && i < 20; i++)
            strbuf_printf(&have, "%s%s", i ? ", " : "",
                          counters ? sent.counters[i].name : sent.stages[i].name);
        log_error("--objective %s: the first point (%s) sent no %s '%s' (it sent %s): name one it "
                  "sends; the sweep stops", sw->spec->objective_spec, p->name,
                  o->figure == SWEEP_FIG_COUNTER ? "counter" : "stage", o->name,
                  have.len ? have.s : "none");
        strbuf_free(&have);
        sw->status = 2;
    }
    doc_sweep_figures_free(&sent);
}

static void run_point(struct sweep *sw, struct point *p)
{
    if (p->session_index < 0 || session_done(sw->session, (size_t)p->session_index))
        return;
    /* The workload runs in mlbench's cgroup: an OOM kill during the step shows there. */
    long before = oom_cgroup_kills(0);
    const struct repetition *rep = session_step(sw->session, (size_t)p->session_index);
    long after = oom_cgroup_kills(0);
    after_run(sw, p, rep, before >= 0 && after >= 0 ? after - before : -1);
}

/* The status of a point whose runs are over, from its result. */
static void settle(struct sweep *sw, struct point *p)
{
    const struct result *r = session_result(sw->session, (size_t)p->session_index);
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
            session_describe_outcome(&first_bad->outcome, how, sizeof how);
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
    if (p->finished || p->session_index < 0)
        return;
    p->finished = true;
    settle(sw, p);
    if (!strcmp(p->status, "not_run"))
        return;
    json_t *extra = json_pack("{s:{s:s, s:I, s:s, s:O}}", "sweep", "id", sw->id,
                              "point", (json_int_t)p->index, "name", p->name,
                              "parameters", p->parameters);
    struct session_output out;
    int status = session_finish(sw->session, (size_t)p->session_index, extra, &out);
    json_decref(extra);
    if (status == 3)
        sw->status = status;
    else if ((status == 1 || status == 127) && sw->status == 0 &&
             strcmp(p->status, "out_of_memory")) /* a point not found failed: the others ran */
        sw->status = 1;
    p->result = out.doc ? json_incref(out.doc) : NULL;
    p->result_path = out.path ? xstrdup(out.path) : NULL;
    session_output_free(&out);
    if (p->result) {
        p->doc = doc_result_read(p->result);
        doc_sweep_figures_free(&p->figures);
        sweep_figures(p->doc, &p->figures);
    }
    if (p->result && !strcmp(p->status, "ok") && isfinite(sw->spec->memory_budget_bytes)) {
        double peak = sweep_figure_value(&p->figures, SWEEP_FIG_GPU_MEMORY, NULL);
        const char *what = "GPU memory";
        if (isnan(peak)) {
            peak = sweep_figure_value(&p->figures, SWEEP_FIG_MEMORY, NULL);
            what = "memory";
        }
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
        if (sw->points[i]->session_index < 0) {
            sw->status = 2;
            return;
        }
    if (!spec->interleave) {
        for (size_t i = 0; i < sw->n_points && !sw->status && !runner_interrupted(); i++) {
            struct point *p = sw->points[i];
            while (!session_done(sw->session, (size_t)p->session_index) && !sw->status)
                run_point(sw, p);
        }
        return;
    }
    uint64_t state = spec->seed;
    size_t *order = xcalloc(sw->n_points, sizeof *order);
    for (;;) {
        bool any = false;
        for (size_t i = 0; i < sw->n_points; i++)
            any = any || !session_done(sw->session, (size_t)sw->points[i]->session_index);
        if (!any || sw->status || runner_interrupted())
            break;
        sweep_shuffle(order, sw->n_points, &state);
        json_t *round = json_array();
        for (size_t k = 0; k < sw->n_points && !sw->status && !runner_interrupted(); k++) {
            struct point *p = sw->points[order[k]];
            if (session_done(sw->session, (size_t)p->session_index))
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

static void run_find_max(struct sweep *sw)
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
        if (p->session_index < 0) {
            sw->status = 2;
            break;
        }
        while (!session_done(sw->session, (size_t)p->session_index) && !sw->status)
            run_point(sw, p);
        finish_point(sw, p);
        if (runner_interrupted() || !strcmp(p->status, "interrupted"))
            break;
        bool ok = fits(p);
        struct doc_sweep_probe pr = {
            .value = (double)search.next, .point = (long long)(sw->n_points - 1), .fits = ok,
            .reason = ok ? NULL : p->detail[0] ? p->detail : p->status,
            .peak_memory_bytes = p->figures.peak_memory_bytes,
            .throughput_rate_per_s = NAN};
        for (size_t i = 0; i < p->figures.n_counters && !pr.throughput_name; i++)
            if (isfinite(p->figures.counters[i].rate_per_s)) { /* the first throughput */
                pr.throughput_name = p->figures.counters[i].name;
                pr.throughput_rate_per_s = p->figures.counters[i].rate_per_s;
            }
        sw->probes = xreallocarray(sw->probes, sw->n_probes + 1, sizeof *sw->probes);
        sw->probes[sw->n_probes++] = pr;
        if (!ok && strcmp(p->status, "out_of_memory") && strcmp(p->status, "over_budget"))
            log_warn("%s=%lld %s (%s): counted as not fitting", spec->search_name, search.next,
                     p->status, p->detail);
        sweep_search_report(&search, p->value, ok);
    }
}

/* Least squares of peak memory against the value over the probes that fit. */
static json_t *memory_fit(const struct sweep *sw, double budget)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < sw->n_probes; i++) {
        const struct doc_sweep_probe *pr = &sw->probes[i];
        double x = pr->value, y = pr->peak_memory_bytes;
        if (pr->fits != 1 || isnan(x) || isnan(y))
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
    return json_pack("{s:o, s:o, s:o, s:o}", "slope_bytes", jsonx_real_or_null(slope),
                     "intercept_bytes", jsonx_real_or_null(icpt), "r2", jsonx_real_or_null(r2),
                     "predicted_max", jsonx_real_or_null(predicted));
}

/* The "find_max" object: the answer, every probe and the memory line. */
static json_t *find_max_json(const struct sweep *sw)
{
    const struct sweep_spec *spec = sw->spec;
    long long largest = -1, first_fail = -1;
    json_t *probes = json_array();
    for (size_t i = 0; i < sw->n_probes; i++) {
        const struct doc_sweep_probe *pr = &sw->probes[i];
        long long v = (long long)pr->value;
        if (pr->fits == 1 && v > largest)
            largest = v;
        else if (pr->fits != 1 && (first_fail < 0 || v < first_fail))
            first_fail = v;
        json_t *tp = isfinite(pr->throughput_rate_per_s)
            ? json_pack("{s:s, s:o}", "name", pr->throughput_name, "rate_per_s",
                        json_real(pr->throughput_rate_per_s))
            : json_null();
        json_array_append_new(probes, json_pack("{s:I, s:I, s:b, s:s?, s:o, s:o}",
            "value", (json_int_t)v, "point", (json_int_t)pr->point, "fits", pr->fits == 1,
            "reason", pr->reason, "peak_memory_bytes",
            jsonx_real_or_null(pr->peak_memory_bytes), "throughput", tp));
    }
    return json_pack("{s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:o, s:o}",
        "parameter", spec->search_name, "low", (json_int_t)spec->search.lo,
        "high", (json_int_t)spec->search.hi, "pow2", spec->search.pow2,
        "memory_budget_bytes", jsonx_real_or_null(spec->memory_budget_bytes),
        "largest_fit", largest >= 0 ? json_integer(largest) : json_null(),
        "first_failure", first_fail >= 0 ? json_integer(first_fail) : json_null(),
        "probes", probes, "memory_fit", memory_fit(sw, spec->memory_budget_bytes));
}

/* ---- the document ------------------------------------------------------------------------ */

/* The result's warnings, as the result has them. */
static json_t *warnings_json(const struct doc_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; r && i < r->n_warnings; i++)
        json_array_append_new(a, json_pack("{s:s?, s:s?}", "code", r->warnings[i].code,
                                           "message", r->warnings[i].message));
    return a;
}

/* Point i of the document; *objective: its objective's value (NAN: unknown), *met: whether it
 * meets every constraint. */
static json_t *point_json(const struct sweep *sw, size_t i, double *objective, bool *met)
{
    const struct point *p = sw->points[i];
    const struct doc_result *r = p->doc;
    const struct sweep_spec *spec = sw->spec;
    json_t *argv = json_array();
    for (int k = 0; k < p->cfg.argc; k++)
        json_array_append_new(argv, json_string(p->cfg.argv[k]));
    double v = sweep_figure_value(&p->figures, spec->objective.figure, spec->objective.name);
    *objective = isfinite(v) ? v : NAN;
    json_t *failures = json_array();
    for (size_t k = 0; k < spec->n_constraints; k++) {
        char why[512];
        if (!sweep_constraint_met(&spec->constraints[k], &p->figures, why, sizeof why))
            json_array_append_new(failures, json_string(why));
    }
    *met = json_array_size(failures) == 0;
    const char *path = p->result_path;
    size_t store_len = strlen(spec->opts->store);
    if (path && !strncmp(path, spec->opts->store, store_len) && path[store_len] == '/')
        path += store_len + 1;
    return json_pack("{s:I, s:s, s:O, s:o, s:s, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o, s:b, "
                     "s:o, s:o}",
        "index", (json_int_t)i, "name", p->name, "parameters", p->parameters, "command", argv,
        "status", p->status ? p->status : "not_run",
        "status_detail", p->detail[0] ? p->detail : NULL,
        "result_id", r ? r->id : NULL, "result_path", p->result ? path : NULL,
        "runs_measured", jsonx_count_or_null(r ? (double)r->summary.runs_measured : NAN),
        "runs_ok", jsonx_count_or_null(r ? (double)r->summary.runs_ok : NAN),
        "figures", r ? sweep_figures_json(&p->figures) : json_object(),
        "objective_value", jsonx_real_or_null(*objective), "constraints_met", *met,
        "constraint_failures", failures, "warnings", warnings_json(r));
}

/* Whether the winner w is better than the runner-up r beyond noise, for an objective of times
 * (the total or a stage: the runs' own values are compared as `mlbench compare` does); NULL when
 * it is (or the objective is no time, or either has no result), else why no point wins. */
static char *undecided_winner(const struct sweep *sw, size_t w, size_t r)
{
    const struct sweep_objective *o = &sw->spec->objective;
    const struct doc_result *dw = sw->points[w]->doc, *dr = sw->points[r]->doc;
    if ((o->figure != SWEEP_FIG_TOTAL && o->figure != SWEEP_FIG_STAGE) || !dw || !dr)
        return NULL;
    struct compare_decision d;
    double change;
    compare_two(dr, dw, o->figure == SWEEP_FIG_STAGE ? o->name : NULL, NULL, &d, &change);
    if (!strcmp(d.verdict, o->maximise ? "slower" : "faster"))
        return NULL;
    const char *a = sw->points[w]->name, *b = sw->points[r]->name;
    if (!isfinite(d.lo) || !isfinite(d.hi))
        return xasprintf("no point is significantly better: the best, %s, and the runner-up, "
                         "%s, cannot be told apart with these runs (%s)", a, b, d.verdict);
    return xasprintf("no point is significantly better: the best, %s, and the runner-up, %s, "
                     "could differ by %+.1f %% to %+.1f %% (a %.0f %% interval of %s against %s; "
                     "%s)", a, b, (d.lo - 1) * 100, (d.hi - 1) * 100, 100 * d.level, a, b,
                     d.verdict);
}

static json_t *build_document(struct sweep *sw, json_t *find_max)
{
    const struct sweep_spec *spec = sw->spec;
    const struct run_config *cfg = spec->cfg;
    double per_hour = NAN; /* as the first priced result says */
    const char *currency = NULL;
    for (size_t i = 0; i < sw->n_points && isnan(per_hour); i++) {
        const struct doc_result *r = sw->points[i]->doc;
        struct doc_cost cost;
        if (r && doc_cost_read(r->cost, &cost)) {
            per_hour = cost.price_per_hour;
            currency = cost.currency;
            doc_cost_free(&cost);
        }
    }
    json_t *points = json_array();
    json_t *winner = json_null();
    char *undecided = NULL;
    double best = NAN, second = NAN;
    size_t ran = 0, best_i = 0, second_i = 0;
    for (size_t i = 0; i < sw->n_points; i++) {
        double v;
        bool met;
        json_array_append_new(points, point_json(sw, i, &v, &met));
        ran += sw->points[i]->result != NULL;
        if (!fits(sw->points[i]) || !met || isnan(v))
            continue;
        bool max = spec->objective.maximise;
        if (!isnan(best) && !(max ? v > best : v < best)) {
            if (isnan(second) || (max ? v > second : v < second)) {
                second = v;
                second_i = i;
            }
            continue;
        }
        second = best;
        second_i = best_i;
        best = v;
        best_i = i;
        json_decref(winner);
        winner = json_pack("{s:I, s:s}", "index", (json_int_t)i, "name", sw->points[i]->name);
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
    } else if (!json_is_null(winner) && !isnan(second) &&
               (undecided = undecided_winner(sw, best_i, second_i)) != NULL) {
        /* issue 35: two points that cannot be told apart have no winner */
        json_decref(winner);
        winner = json_null();
    } else if (!json_is_null(winner)) {
        char desc[300], val[48];
        sweep_objective_describe(&spec->objective, desc, sizeof desc);
        enum sweep_figure f = spec->objective.figure;
        if (f == SWEEP_FIG_TOTAL || f == SWEEP_FIG_STAGE)
            units_duration(best, val, sizeof val);
        else if (f == SWEEP_FIG_MEMORY || f == SWEEP_FIG_GPU_MEMORY)
            units_bytes(best, val, sizeof val);
        else if (f == SWEEP_FIG_COST)
            snprintf(val, sizeof val, "%.3g %s", best, currency ? currency : "");
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
    json_t *undecided_json = undecided ? json_string(undecided) : json_null();
    free(undecided);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:I, s:O, "
                     "s:{s:s, s:s, s:s, s:s?, s:s}, s:o, s:o, s:o, s:o, s:o, s:o}",
        "schema", DOC_SWEEP_SCHEMA, "id", sw->id, "created", created, "status", status,
        "mode", modes[spec->mode], "command", command, "parameters", params,
        "interleave", spec->interleave && spec->mode != SWEEP_FIND_MAX,
        "seed", (json_int_t)(spec->seed & 0x7fffffffffffffffULL), "rounds", sw->rounds,
        "objective", "spec", spec->objective_spec, "direction",
        spec->objective.maximise ? "max" : "min", "figure", figure_names[spec->objective.figure],
        "name", spec->objective.name[0] ? spec->objective.name : NULL, "description", desc,
        "constraints", constraints, "price", isnan(per_hour) ? json_null()
            : json_pack("{s:o, s:s?}", "per_hour", json_real(per_hour), "currency", currency),
        "points", points, "winner", winner, "winner_undecided", undecided_json,
        "find_max", find_max ? find_max : json_null());
}

static int write_document(const struct sweep *sw, json_t *doc, char **path_out)
{
    char err[1024];
    char *dir = xasprintf("%s/%s", sw->spec->opts->store, STORE_SWEEPS_DIR);
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
    if (sw->spec->opts->output && result_write_json(doc, sw->spec->opts->output, err, sizeof err)) {
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
    if (store_where(spec->opts->store, NULL, NULL, 0) != 0) {
        /* its points refer to result files beside the sweep document */
        log_error("a sweep is kept in a directory store: give --store DIR (mlbench store push "
                  "sends its results to the shared store afterwards)");
        json_decref(sw.rounds);
        return 2;
    }
    struct session_options points = *spec->opts;
    points.output = NULL; /* -o is the sweep document's */
    int status = session_open(spec->cfg, &points, &sw.session);
    if (status != 0) {
        session_close(sw.session);
        json_decref(sw.rounds);
        return status;
    }
    if (!spec->opts->quiet)
        log_info("sweep %s: %s", sw.id,
                 spec->mode == SWEEP_FIND_MAX ? "the largest value that fits, probe by probe"
                 : spec->interleave ? "interleaved: each round runs every point once, in a "
                                      "shuffled order"
                                    : "one point after another (--no-interleave)");
    if (spec->mode == SWEEP_FIND_MAX)
        run_find_max(&sw);
    else
        run_matrix(&sw);
    session_end_runs(sw.session);
    bool ran = false; /* a point made a run: its result and the document are written */
    for (size_t i = 0; i < sw.n_points; i++)
        ran = ran || (sw.points[i]->session_index >= 0 &&
                      session_result(sw.session, (size_t)sw.points[i]->session_index)->n_reps > 0);
    for (size_t i = 0; ran && i < sw.n_points; i++)
        finish_point(&sw, sw.points[i]);
    json_t *find_max = spec->mode == SWEEP_FIND_MAX ? find_max_json(&sw) : NULL;
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
    session_close(sw.session);
    for (size_t i = 0; i < sw.n_points; i++)
        point_free(sw.points[i], owned);
    free(sw.points);
    free(sw.probes);
    json_decref(sw.rounds);
    return status;
}
