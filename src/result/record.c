/* record.c: the result of a timings document (see record.h): each round a repetition timed per
 * call, summarised and analysed as a run's would be. */
#include "result/record.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/marker_parse.h"
#include "measure/stages.h"
#include "result/resources.h"
#include "result/summary.h"
#include "util/xalloc.h"

#define FEW_ROUNDS 5                  /* fewer: the few_rounds warning */

/* A round as a repetition: its time per call, status ok; CPU time per call when the timer gave
 * it, else 0 that record_mark_unmeasured makes null. Metadata goes to the first measured round, as
 * marker metadata events would. */
static void add_round(struct result *r, const struct timings *t, bool warmup, size_t i,
                      int64_t start_unix_ns, bool with_meta)
{
    const json_t *a = warmup ? t->warmup : t->rounds;
    double ns = json_number_value(json_array_get(a, i));
    struct repetition *rep = result_add_rep(r, warmup);
    struct run_outcome *o = &rep->outcome;
    o->status = RUN_OK;
    o->start_unix_ns = start_unix_ns;
    o->wall_ns = llround(ns / t->number);
    if (!warmup && t->cpu)
        o->user_ns = llround(json_number_value(json_array_get(t->cpu, i)) / t->number);
    for (size_t k = 0; with_meta && k < t->n_meta; k++) {
        struct marker_token tok = {.kind = MARKER_META, .name = t->meta_key[k],
                                   .name_len = strlen(t->meta_key[k]),
                                   .value = t->meta_value[k],
                                   .value_len = strlen(t->meta_value[k])};
        event_log_add(&rep->log, &tok);
    }
    stages_aggregate(&rep->log, 0, o->wall_ns, &rep->stages);
    free(rep->log.ev); /* as session.c: the aggregate and the interned names are kept */
    rep->log.ev = NULL;
    rep->log.n = rep->log.cap = 0;
}

/* Replaces the warnings about too few runs with one that speaks of rounds. */
static void few_rounds(struct summary *s, const struct timings *t)
{
    if (t->n_rounds >= FEW_ROUNDS)
        return;
    size_t k = 0;
    for (size_t i = 0; i < s->n_warnings; i++) {
        struct warning *w = &s->warnings[i];
        if (!strcmp(w->code, "few_runs") || !strcmp(w->code, "low_ci_coverage")) {
            free(w->code);
            free(w->message);
        } else {
            s->warnings[k++] = *w;
        }
    }
    s->n_warnings = k;
    if (t->n_rounds < 3)
        summary_warn(s, "few_rounds", "few rounds: the interval is wide: with %zu measured "
                     "round(s) no spread can be judged and no confidence interval given; "
                     "measure %d rounds or more (6 give a 95 %% interval of the median)",
                     t->n_rounds, FEW_ROUNDS);
    else
        summary_warn(s, "few_rounds", "few rounds: the interval is wide: with %zu rounds the "
                     "interval of the median (min..max) covers only %.1f %%; measure %d rounds "
                     "or more (6 give a 95 %% interval)", t->n_rounds, 100 * s->wall.ci_level,
                     FEW_ROUNDS);
}

/* The result model has no "unknown" for the figures rusage gives a run, so the repetitions
 * carry 0 there and their JSON is corrected here (record.h). */
void record_mark_unmeasured(json_t *doc, const struct timings *t)
{
    static const char *const never[] = {
        "sys_ns", "max_rss_bytes", "minor_faults", "major_faults", "voluntary_context_switches",
        "involuntary_context_switches",
    };
    json_t *runs = json_object_get(doc, "runs"), *run;
    size_t i;
    json_array_foreach(runs, i, run) {
        bool warmup = i < t->n_warmup;
        size_t k = warmup ? i : i - t->n_warmup;
        for (size_t n = 0; n < sizeof never / sizeof never[0]; n++)
            json_object_set_new(run, never[n], json_null());
        json_object_set(run, "round_ns", json_array_get(warmup ? t->warmup : t->rounds, k));
        if (!warmup && t->cpu)
            json_object_set(run, "round_cpu_ns", json_array_get(t->cpu, k));
        else
            json_object_set_new(run, "user_ns", json_null());
    }
    json_t *s = json_object_get(doc, "summary");
    json_object_del(s, "sys_ns");
    json_object_del(s, "max_rss_bytes");
    if (!t->cpu) {
        json_object_del(s, "user_ns");
        json_object_set_new(s, "cpu_cores", json_null());
    }
    json_t *cfg = json_object_get(doc, "config"), *sampling = json_object_get(doc, "sampling");
    json_object_set_new(cfg, "interval_ns", json_null());
    json_object_set_new(sampling, "interval_ns", json_null());
    json_object_set_new(sampling, "first_interval_ns", json_null());
    json_object_set_new(cfg, "timings", json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "schema", DOC_TIMINGS_SCHEMA, "name", t->name,
        "number", (json_int_t)t->number, "rounds", (json_int_t)t->n_rounds,
        "warmup_rounds", (json_int_t)t->n_warmup,
        "synchronized", t->synchronized ? json_string(t->synchronized) : json_null(),
        "timer", t->timer ? json_string(t->timer) : json_null()));
}

void record_result(const struct timings *t, struct run_config *cfg, struct result *r,
                   json_t **env, struct machine_facts *facts)
{
    cfg->argv = t->argv;
    cfg->argc = t->argc;
    cfg->runs = (int)t->n_rounds;
    cfg->warmup = (int)t->n_warmup;
    cfg->grace_s = NAN; /* nothing was stopped: null */
    cfg->label = t->label;
    result_init(r, cfg);
    if (t->started_unix_ns >= 0)
        r->created_unix_ns = t->started_unix_ns;
    r->sampling.skipped = xcalloc(2, sizeof *r->sampling.skipped);
    r->sampling.skipped[0] = xstrdup("resources: not sampled: timed in its own process (mlbench "
                                     "record); CPU time only when the timer gave cpu_ns");
    r->sampling.n_skipped = 1;
    /* Each round starts where the ones before it ended (the gaps between them are unknown). */
    double start = (double)r->created_unix_ns;
    for (size_t i = 0; i < t->n_warmup + t->n_rounds; i++) {
        bool warmup = i < t->n_warmup;
        size_t k = warmup ? i : i - t->n_warmup;
        int64_t at = start < 9.2e18 ? (int64_t)start : INT64_C(9200000000000000000);
        add_round(r, t, warmup, k, at, !warmup && k == 0);
        start += json_number_value(json_array_get(warmup ? t->warmup : t->rounds, k));
    }
    const struct machine_facts *machine = &r->facts;
    if (*env) {
        r->environment = json_incref(*env);
        machine_facts_copy(&r->facts, facts);
    } else {
        machine = result_capture_environment(r, NULL);
        *env = json_incref(r->environment);
        machine_facts_copy(facts, machine);
    }
    summary_compute(r, machine); /* unpriced: record takes no --price */
    resources_analyze(r, machine); /* no samples: no verdicts, only what needs none (governor) */
    few_rounds(&r->summary, t);
}
