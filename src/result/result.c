/* result: the result model and its JSON form (see result.h, docs/result-schema.md). */
#include "result/result.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "doc/result.h"
#include "measure/attrib.h"
#include "measure/stages.h"
#include "result/cost.h"
#include "result/envinfo.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/units.h"
#include "util/fsx.h"
#include "util/xalloc.h"

void result_new_id(char *id, size_t len, int64_t *unix_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (unix_ns)
        *unix_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y%m%dT%H%M%S", &tm);
    unsigned int rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (unsigned int)ts.tv_nsec ^ (unsigned int)getpid();
    snprintf(id, len, "%s-%06x", when, rnd & 0xffffff);
}

void result_init(struct result *r, const struct run_config *config)
{
    memset(r, 0, sizeof *r);
    r->config = config;
    result_new_id(r->id, sizeof r->id, &r->created_unix_ns);
}

struct repetition *result_add_rep(struct result *r, bool warmup)
{
    r->reps = xgrow(r->reps, &r->cap_reps, r->n_reps + 1, sizeof *r->reps);
    struct repetition *rep = &r->reps[r->n_reps];
    memset(rep, 0, sizeof *rep);
    rep->index = (int)r->n_reps++;
    rep->warmup = warmup;
    event_log_init(&rep->log);
    return rep;
}

void result_free(struct result *r)
{
    for (size_t i = 0; i < r->n_reps; i++) {
        free(r->reps[i].outcome.stderr_tail);
        free(r->reps[i].prepare_error);
        attrib_free(r->reps[i].metrics, r->reps[i].stages.n_stages + 1);
        sample_table_free(&r->reps[i].samples);
        event_log_free(&r->reps[i].log);
        stages_free(&r->reps[i].stages);
    }
    for (size_t i = 0; i < r->sampling.n_active; i++)
        free(r->sampling.active[i]);
    for (size_t i = 0; i < r->sampling.n_skipped; i++)
        free(r->sampling.skipped[i]);
    free(r->sampling.active);
    free(r->sampling.skipped);
    if (r->analyzed)
        analysis_free(&r->analysis);
    free(r->figures);
    free(r->reps);
    summary_free(&r->summary);
    json_decref(r->environment);
    machine_facts_free(&r->facts);
    price_match_free(&r->price);
    memset(r, 0, sizeof *r);
}

/* A number, or null when it is not finite (JSON has no NaN). */
/* The reader refuses a file holding more names than one run aggregates. */
_Static_assert(DOC_MAX_NAMES == STAGES_MAX_NAMES, "doc/result.h and measure/stages.h disagree");

static json_t *jint(int64_t v)
{
    return json_integer((json_int_t)v);
}

/* A string from outside (argv, labels, host names) that may not be UTF-8: never NULL. */
static json_t *jtext(const char *s)
{
    char *clean = units_utf8_sanitize(s, strlen(s));
    json_t *j = json_string(clean);
    free(clean);
    return j;
}

static json_t *jstr_or_null(const char *s)
{
    return s ? jtext(s) : json_null();
}

static json_t *jtime(int64_t unix_ns)
{
    time_t sec = (time_t)(unix_ns / 1000000000);
    struct tm tm;
    char buf[40], out[48];
    gmtime_r(&sec, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%03dZ", buf, (int)(unix_ns / 1000000 % 1000));
    return json_string(out);
}

static json_t *jsignal(int sig)
{
    if (sig <= 0)
        return json_null();
    const char *abbrev = sigabbrev_np(sig);
    char name[32];
    if (abbrev)
        snprintf(name, sizeof name, "SIG%s", abbrev);
    else
        snprintf(name, sizeof name, "signal %d", sig);
    return json_string(name);
}

static json_t *stats_json(const struct stats_summary *s)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}",
                     "n", (json_int_t)s->n, "median", jsonx_real_or_null(s->median), "mean", jsonx_real_or_null(s->mean),
                     "stddev", jsonx_real_or_null(s->stddev), "mad", jsonx_real_or_null(s->mad), "min", jsonx_real_or_null(s->min),
                     "max", jsonx_real_or_null(s->max), "ci_low", jsonx_real_or_null(s->ci_low), "ci_high", jsonx_real_or_null(s->ci_high),
                     "ci_level", jsonx_real_or_null(s->ci_level), "cv", jsonx_real_or_null(s->cv),
                     "outliers", (json_int_t)s->n_outliers);
}

/* Attributed figures of one stage: [{metric, labels, kind, mean, min, peak, n}], counters as
 * rates per second. Series with no sample in the stage are left out. */
static json_t *resources_json(const struct series_def *defs, size_t n_series,
                              const struct metric_stat *m)
{
    json_t *a = json_array();
    for (size_t i = 0; m && i < n_series; i++) {
        if (m[i].n == 0)
            continue;
        json_array_append_new(a, json_pack(
            "{s:s, s:s, s:s, s:o, s:o, s:o, s:I}", "metric", defs[i].name, "labels",
            defs[i].labels, "kind", defs[i].kind == SERIES_COUNTER ? "rate" : "gauge",
            "mean", jsonx_real_or_null(m[i].mean), "min", jsonx_real_or_null(m[i].min), "peak", jsonx_real_or_null(m[i].peak),
            "n", (json_int_t)m[i].n));
    }
    return a;
}

/* The samples of one run as columns: t_ns relative to the run's start, one array per series. */
static json_t *samples_json(const struct sample_table *t, int64_t t0)
{
    json_t *times = json_array(), *series = json_array();
    for (size_t r = 0; r < t->n; r++)
        json_array_append_new(times, jint(t->t_ns[r] - t0));
    for (size_t i = 0; i < t->n_series; i++) {
        json_t *v = json_array();
        for (size_t r = 0; r < t->n; r++)
            json_array_append_new(v, jsonx_real_or_null(t->v[i][r]));
        json_t *s = json_pack(
            "{s:s, s:s, s:s, s:s, s:o}", "metric", t->defs[i].name, "labels", t->defs[i].labels,
            "kind", t->defs[i].kind == SERIES_COUNTER ? "counter" : "gauge",
            "source", t->defs[i].source, "values", v);
        if (t->defs[i].max_rate > 0)
            json_object_set_new(s, "max_rate", json_real(t->defs[i].max_rate));
        json_array_append_new(series, s);
    }
    return json_pack("{s:o, s:o}", "t_ns", times, "series", series);
}

static json_t *rep_markers_json(const struct repetition *rep)
{
    json_t *examples = json_array();
    for (size_t i = 0; i < rep->log.n_examples; i++)
        json_array_append_new(examples, json_string(rep->log.example[i]));
    json_t *by_thread = json_array();
    for (size_t i = 0; i < rep->log.n_drops; i++)
        json_array_append_new(by_thread, json_pack("{s:i, s:i, s:I}", "pid",
                                                   (int)rep->log.drops[i].pid, "tid",
                                                   (int)rep->log.drops[i].tid, "events_dropped",
                                                   (json_int_t)rep->log.drops[i].events));
    return json_pack("{s:s, s:I, s:I, s:o, s:I, s:I, s:o, s:I, s:o, s:I, s:I, s:I, s:I, s:I}",
                     "transport", rep->log.rings_offered ? "ring" : "datagram",
                     "rings", (json_int_t)rep->log.rings,
                     "ring_dropped", (json_int_t)rep->log.ring_dropped,
                     "ring_dropped_by_thread", by_thread,
                     "events", (json_int_t)rep->stages.events,
                     "malformed", (json_int_t)rep->log.malformed, "malformed_examples", examples,
                     "foreign", (json_int_t)rep->log.foreign, "first_foreign_pid",
                     rep->log.foreign ? json_integer(rep->log.first_foreign_pid) : json_null(),
                     "unbalanced", (json_int_t)rep->stages.unbalanced,
                     "unclosed", (json_int_t)rep->stages.unclosed,
                     "dropped", (json_int_t)rep->log.dropped,
                     "names_dropped", (json_int_t)rep->stages.names_dropped,
                     "name_events_dropped", (json_int_t)rep->stages.name_events_dropped);
}

/* runs[].counters[].points: [[t_ns, value, running sum], ...] (docs/result-schema.md), with
 * points_stride when only every stride-th sample was kept. */
static void counter_points(json_t *jc, const struct counter_total *c)
{
    json_t *points = json_array();
    for (size_t k = 0; k < c->n_points; k++) {
        const struct counter_point *p = &c->points[k];
        json_array_append_new(points, json_pack("[o, o, o]", jint(p->t_ns), jsonx_real_or_null(p->value),
                                                jsonx_real_or_null(p->sum)));
    }
    json_object_set_new(jc, "points", points);
    if (c->stride > 1)
        json_object_set_new(jc, "points_stride", json_integer((json_int_t)c->stride));
}

/* The other hosts of a multi-rank run (rank_link.h): per host its ranks, its resources over
 * the run and per stage (attributed as the run's own samples are), and its samples. */
static json_t *hosts_json(const struct repetition *rep, const json_t *ranks)
{
    const struct event_log *log = &rep->log;
    const struct stage_data *d = &rep->stages;
    json_t *out = json_array();
    for (size_t h = 0; h < log->n_hosts; h++) {
        const struct host_samples *hs = &log->hosts[h];
        const struct sample_table *tab = &hs->tab;
        struct metric_stat **m = attrib_run(tab, rep->outcome.start_ns, rep->outcome.wall_ns, d);
        json_t *on = json_array(), *stages = json_array(), *r;
        size_t i;
        json_array_foreach(ranks, i, r)
            if (json_string_value(json_object_get(r, "host")) &&
                !strcmp(json_string_value(json_object_get(r, "host")), hs->host))
                json_array_append(on, json_object_get(r, "rank"));
        for (i = 0; i < d->n_stages; i++)
            json_array_append_new(stages, json_pack(
                "{s:s, s:o}", "name", event_log_str(log, d->stages[i].name), "resources",
                resources_json(tab->defs, tab->n_series, m[i])));
        json_array_append_new(out, json_pack(
            "{s:s, s:o, s:o, s:o, s:o}", "host", hs->host, "ranks", on, "resources",
            resources_json(tab->defs, tab->n_series, m[d->n_stages]), "stages", stages,
            "samples", samples_json(tab, rep->outcome.start_ns)));
        attrib_free(m, d->n_stages + 1);
    }
    return out;
}

static json_t *rep_stages_json(const struct repetition *rep, json_t *out)
{
    const struct stage_data *d = &rep->stages;
    const struct event_log *log = &rep->log;

    json_t *stages = json_array();
    for (size_t i = 0; i < d->n_stages; i++) {
        const struct stage_total *t = &d->stages[i];
        json_array_append_new(stages, json_pack(
            "{s:s, s:i, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
            event_log_str(log, t->name), "depth", (int)t->depth, "count", (json_int_t)t->count,
            "unclosed", (json_int_t)t->unclosed, "active_ns", jint(t->active_ns),
            "busy_ns", jint(t->busy_ns), "overlap_ns", jint(t->overlap_ns),
            "first_begin_ns", jint(t->first_ns),
            "last_end_ns", jint(t->last_ns),
            "resources", resources_json(rep->samples.defs, rep->samples.n_series,
                                        rep->metrics ? rep->metrics[i] : NULL)));
    }
    json_object_set_new(out, "stages", stages);
    json_object_set_new(out, "outside_ns", d->outside_ns >= 0 ? jint(d->outside_ns) : json_null());
    json_object_set_new(out, "ranks", rank_run_json(d, log));

    json_t *spans = json_array();
    for (size_t i = 0; i < d->n_spans && i < RESULT_MAX_SPANS; i++) {
        const struct span *s = &d->spans[i];
        json_array_append_new(spans, json_pack(
            "{s:s, s:i, s:i, s:o, s:o, s:i, s:b}", "name", event_log_str(log, s->name),
            "pid", (int)s->pid, "tid", (int)s->tid, "start_ns", jint(s->start_ns),
            "end_ns", jint(s->end_ns), "depth", (int)s->depth, "closed", s->closed));
    }
    json_object_set_new(out, "spans", spans);
    json_object_set_new(out, "spans_dropped",
                        jint(d->n_spans > RESULT_MAX_SPANS ? (int64_t)(d->n_spans - RESULT_MAX_SPANS) : 0));

    json_t *counters = json_array();
    for (size_t i = 0; i < d->n_counters; i++) {
        const struct counter_total *c = &d->counters[i];
        json_t *jc = json_pack(
            "{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:b}", "name", event_log_str(log, c->name),
            "n", (json_int_t)c->n, "sum", jsonx_real_or_null(c->sum), "min", jsonx_real_or_null(c->min), "max", jsonx_real_or_null(c->max),
            "last", jsonx_real_or_null(c->last), "last_ns", jint(c->last_ns), "count", c->count);
        counter_points(jc, c);
        json_array_append_new(counters, jc);
    }
    json_object_set_new(out, "counters", counters);

    json_t *meta = json_object();
    for (size_t i = 0; i < d->n_meta; i++)
        json_object_set_new(meta, event_log_str(log, d->meta[i].key),
                            json_string(event_log_str(log, d->meta[i].value)));
    json_object_set_new(out, "metadata", meta);

    json_t *instants = json_array();
    for (size_t i = 0; i < d->n_instants && i < RESULT_MAX_INSTANTS; i++) {
        const struct instant *in = &d->instants[i];
        json_array_append_new(instants, json_pack(
            "{s:s, s:o, s:i, s:i}", "name", event_log_str(log, in->name), "t_ns", jint(in->t_ns),
            "pid", (int)in->pid, "tid", (int)in->tid));
    }
    json_object_set_new(out, "instants", instants);
    json_object_set_new(out, "markers", rep_markers_json(rep));
    json_object_set_new(out, "resources",
                        resources_json(rep->samples.defs, rep->samples.n_series,
                                       rep->metrics ? rep->metrics[d->n_stages] : NULL));
    json_object_set_new(out, "samples", samples_json(&rep->samples, rep->outcome.start_ns));
    if (rep->log.n_hosts)
        json_object_set_new(out, "hosts", hosts_json(rep, json_object_get(out, "ranks")));
    return out;
}

/* The reasons of a gpu_clock record (GPU_CLOCK_POWER, GPU_CLOCK_THERMAL) as ["power", ...]. */
static json_t *clock_reasons_json(unsigned reasons)
{
    json_t *a = json_array();
    if (reasons & GPU_CLOCK_POWER)
        json_array_append_new(a, json_string("power"));
    if (reasons & GPU_CLOCK_THERMAL)
        json_array_append_new(a, json_string("thermal"));
    return a;
}

/* runs[].gpu_clock: only for a run whose GPU clock was measured (gpu_clock.h). */
static void rep_gpu_clock_json(const struct gpu_clock_run *gc, json_t *out)
{
    if (!gc->measured)
        return;
    json_object_set_new(out, "gpu_clock", json_pack(
        "{s:b, s:I, s:I, s:I, s:o, s:o, s:b}", "measured", gc->measured,
        "busy_samples", (json_int_t)gc->busy_samples,
        "throttled_samples", (json_int_t)gc->throttled_samples,
        "slow_clock_samples", (json_int_t)gc->slow_samples,
        "reasons", clock_reasons_json(gc->reasons), "scaling", jsonx_real_or_null(gc->scaling),
        "throttled", gc->throttled));
}

static json_t *rep_json(const struct repetition *rep)
{
    const struct run_outcome *o = &rep->outcome;
    json_t *j = json_pack(
        "{s:i, s:b, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
        "index", rep->index, "warmup", rep->warmup,
        "status", rep->prepare_error ? "failed" : run_status_name(o->status),
        "exit_code", o->exit_code >= 0 ? json_integer(o->exit_code) : json_null(),
        "signal", jsignal(o->signal),
        "error", jstr_or_null(o->error[0] ? o->error : rep->prepare_error),
        "start", jtime(o->start_unix_ns),
        "wall_ns", jint(o->wall_ns), "user_ns", jint(o->user_ns), "sys_ns", jint(o->sys_ns),
        "max_rss_bytes", jint(o->max_rss_bytes), "minor_faults", jint(o->minor_faults),
        "major_faults", jint(o->major_faults),
        "voluntary_context_switches", jint(o->vol_ctx_switches),
        "involuntary_context_switches", jint(o->invol_ctx_switches),
        "stderr_tail", jstr_or_null(o->stderr_tail),
        "prepare_error", jstr_or_null(rep->prepare_error));
    rep_gpu_clock_json(&rep->gpu_clock, j);
    return rep_stages_json(rep, j);
}

/* A stage's latency distribution (docs/result-schema.md), or null without closed spans. */
static json_t *span_stats_json(const struct span_stats *st)
{
    if (!st)
        return json_null();
    json_t *counts = json_array();
    for (size_t i = 0; i < st->n_bins; i++)
        json_array_append_new(counts, json_integer((json_int_t)st->counts[i]));
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:{s:i, s:i, s:o}}",
                     "n", (json_int_t)st->n, "p50_ns", jsonx_real_or_null(st->p50_ns),
                     "p90_ns", jsonx_real_or_null(st->p90_ns), "p99_ns", jsonx_real_or_null(st->p99_ns),
                     "p999_ns", jsonx_real_or_null(st->p999_ns), "max_ns", jsonx_real_or_null(st->max_ns), "histogram",
                     "bins_per_octave", SPAN_STATS_BINS_PER_OCTAVE, "first_bin", st->first_bin,
                     "counts", counts);
}

/* summary.gpu_clock: present when some measured run's GPU clock was measured. */
static void summary_gpu_clock_json(const struct gpu_clock_summary *gc, json_t *out)
{
    if (!gc->runs)
        return;
    json_object_set_new(out, "gpu_clock", json_pack(
        "{s:o, s:I, s:I, s:I, s:o, s:o, s:o}", "threshold", jsonx_real_or_null(gc->threshold),
        "runs", (json_int_t)gc->runs, "throttled_runs", (json_int_t)gc->throttled_runs,
        "discarded_runs", (json_int_t)gc->discarded_runs,
        "reasons", clock_reasons_json(gc->reasons), "scaling_median", jsonx_real_or_null(gc->scaling_median),
        "scaling_min", jsonx_real_or_null(gc->scaling_min)));
}

static json_t *summary_json(const struct summary *s)
{
    json_t *j = json_pack("{s:I, s:I, s:I, s:b}", "runs_measured", (json_int_t)s->n_measured,
                          "runs_ok", (json_int_t)s->n_ok, "runs_used", (json_int_t)s->n_used,
                          "used_failed_runs", s->used_failed);
    summary_gpu_clock_json(&s->gpu_clock, j);
    if (!s->valid)
        return j;
    json_object_set_new(j, "wall_ns", stats_json(&s->wall));
    json_object_set_new(j, "user_ns", stats_json(&s->user));
    json_object_set_new(j, "sys_ns", stats_json(&s->sys));
    json_object_set_new(j, "max_rss_bytes", stats_json(&s->max_rss));
    json_object_set_new(j, "cpu_cores", jsonx_real_or_null(s->cpu_cores_median));
    json_object_set_new(j, "outside_ns",
                        s->outside_median_ns >= 0 ? jsonx_real_or_null(s->outside_median_ns) : json_null());
    json_object_set_new(j, "resources", resources_json(s->series, s->n_series, s->total_resources));

    json_t *stages = json_array();
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct stage_summary *st = &s->stages[i];
        json_array_append_new(stages, json_pack(
            "{s:s, s:i, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name", st->name, "depth",
            st->depth, "n", (json_int_t)st->n, "active_ns", stats_json(&st->active),
            "busy_ns_median", jsonx_real_or_null(st->busy_median_ns),
            "overlap_ns_median", jsonx_real_or_null(st->overlap_median_ns),
            "span_ns_median", jsonx_real_or_null(st->span_median_ns),
            "count_median", jsonx_real_or_null(st->count_median), "share", jsonx_real_or_null(st->share),
            "resources", resources_json(s->series, s->n_series, st->resources)));
        json_object_set_new(json_array_get(stages, i), "spans", span_stats_json(st->spans));
    }
    json_object_set_new(j, "stages", stages);
    json_object_set_new(j, "ranks", rank_summary_json(&s->ranks));

    json_t *counters = json_array();
    for (size_t i = 0; i < s->n_counters; i++) {
        const struct counter_summary *c = &s->counters[i];
        json_array_append_new(counters, json_pack(
            "{s:s, s:I, s:o, s:o, s:o, s:b}", "name", c->name, "n", (json_int_t)c->n,
            "last", stats_json(&c->last), "sum_median", jsonx_real_or_null(c->sum_median),
            "rate_per_s_median", jsonx_real_or_null(c->rate_median), "count", c->count));
        json_t *o = json_array_get(counters, i);
        json_object_set_new(o, "stage", jstr_or_null(c->stage));
        json_object_set_new(o, "stage_mixed", json_boolean(c->stage_mixed));
        json_object_set_new(o, "stage_rate_per_s_median", jsonx_real_or_null(c->stage_rate_median));
    }
    json_object_set_new(j, "counters", counters);

    json_t *meta = json_array();
    for (size_t i = 0; i < s->n_meta; i++)
        json_array_append_new(meta, json_pack("{s:s, s:s, s:b}", "key", s->meta[i].key,
                                              "value", s->meta[i].value,
                                              "varies", s->meta[i].varies));
    json_object_set_new(j, "metadata", meta);
    return j;
}

const struct machine_facts *result_capture_environment(struct result *r,
                                                       const struct sampler *sampler)
{
    struct source_facts sources = {.n_gpus = 0};
    if (sampler)
        sampler_facts(sampler, &sources);
    struct envinfo_options opt = {.sources = sampler ? &sources : NULL};
    /* A Python workload: its own interpreter's version and packages (envinfo/python.c) */
    const char *cmd = r->config && r->config->argc > 0 ? r->config->argv[0] : NULL;
    const char *base = cmd && strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
    if (base && !strncmp(base, "python", 6))
        opt.python = cmd;
    json_decref(r->environment);
    machine_facts_free(&r->facts);
    r->environment = envinfo_capture(&opt, &r->facts);
    source_facts_free(&sources);
    return &r->facts;
}

static json_t *sampling_json(const struct sampling_info *si)
{
    json_t *active = json_array(), *skipped = json_array();
    for (size_t i = 0; i < si->n_active; i++)
        json_array_append_new(active, json_string(si->active[i]));
    for (size_t i = 0; i < si->n_skipped; i++)
        json_array_append_new(skipped, jtext(si->skipped[i]));
    return json_pack("{s:o, s:b, s:o, s:o, s:o, s:I, s:o, s:o}", "interval_ns",
                     jint(si->interval_ns), "adaptive", si->adaptive, "first_interval_ns",
                     jint(si->adaptive ? SAMPLER_MIN_INTERVAL_NS : si->interval_ns), "sources", active, "not_measured", skipped, "errors", (json_int_t)si->errors,
                     "cpu_ns", jint(si->cpu_ns),
                     "cpu_ratio", si->sampled_ns > 0 ? jsonx_real_or_null((double)si->cpu_ns / (double)si->sampled_ns)
                                                     : json_null());
}

static json_t *analysis_json(const struct result *r)
{
    if (!r->analyzed)
        return json_null();
    const struct analysis *a = &r->analysis;
    json_t *verdicts = json_array(), *findings = json_array(), *gpus = json_array();
    for (size_t i = 0; i < a->n_verdicts; i++)
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s}", "stage", a->verdicts[i].stage,
                                                  "rule", a->verdicts[i].rule,
                                                  "evidence", a->verdicts[i].evidence));
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct finding *f = &a->findings[i];
        json_array_append_new(findings, json_pack(
            "{s:s, s:s, s:s, s:s, s:o}", "rule", f->rule, "stage", f->stage, "evidence",
            f->evidence, "recommendation", f->recommendation, "saving_ns", jsonx_real_or_null(f->saving_ns)));
    }
    for (int g = 0; g < 64; g++)
        if (r->gpus_shown & (1ull << g))
            json_array_append_new(gpus, json_integer(g));
    return json_pack("{s:o, s:o, s:o, s:o}", "bottleneck", jstr_or_null(a->bottleneck),
                     "gpus", gpus, "verdicts", verdicts, "findings", findings);
}

json_t *result_to_json(const struct result *r)
{
    const struct run_config *c = r->config;
    json_t *argv = json_array();
    for (int i = 0; i < c->argc; i++)
        json_array_append_new(argv, jtext(c->argv[i]));

    json_t *config = json_pack(
        "{s:o, s:i, s:o, s:o, s:o, s:o, s:b, s:b}",
        "runs", c->runs ? json_integer(c->runs) : json_null(), "warmup", c->warmup,
        "timeout_s", c->timeout_s > 0 ? jsonx_real_or_null(c->timeout_s) : json_null(),
        "grace_s", jsonx_real_or_null(c->grace_s), "prepare", jstr_or_null(c->prepare),
        "cleanup", jstr_or_null(c->cleanup), "fail_fast", c->fail_fast,
        "show_output", c->show_output);
    json_object_set_new(config, "interval_ns", jint(c->interval_ns));
    json_object_set_new(config, "interval_adaptive", json_boolean(c->interval_adaptive));
    json_object_set_new(config, "all_gpus", json_boolean(c->all_gpus));
    json_object_set_new(config, "discard_throttled", json_boolean(c->discard_throttled));
    json_object_set_new(config, "throttle_threshold", jsonx_real_or_null(gpu_clock_threshold(c)));
    json_object_set_new(config, "nvtx", json_boolean(c->nvtx));
    json_object_set_new(config, "ranks", json_boolean(c->ranks));

    json_t *runs = json_array();
    for (size_t i = 0; i < r->n_reps; i++)
        json_array_append_new(runs, rep_json(&r->reps[i]));

    json_t *warnings = json_array();
    for (size_t i = 0; i < r->summary.n_warnings; i++)
        json_array_append_new(warnings, json_pack("{s:s, s:s}", "code", r->summary.warnings[i].code,
                                                  "message", r->summary.warnings[i].message));

    json_t *doc = json_pack(
        "{s:s, s:s, s:o, s:o, s:{s:s, s:s}, s:{s:o, s:b}, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:I,"
        " s:o, s:o}",
        "schema", DOC_RESULT_SCHEMA, "id", r->id, "label", jstr_or_null(c->label),
        "created", jtime(r->created_unix_ns),
        "mlbench", "version", MLBENCH_VERSION, "git_commit", MLBENCH_GIT_COMMIT,
        "command", "argv", argv, "shell", c->shell,
        "config", config,
        "environment", r->environment ? json_incref(r->environment) : json_object(),
        "status", r->stop_signal ? "interrupted" : "complete",
        "interrupted_by", jsignal(r->stop_signal),
        "runs", runs, "summary", summary_json(&r->summary), "warnings", warnings,
        "markers_outside_runs", (json_int_t)r->events_outside_runs,
        "sampling", sampling_json(&r->sampling), "analysis", analysis_json(r));
    if (doc)
        json_object_set_new(doc, "cost", r->price.priced ? cost_json(&r->summary, &r->price)
                                                         : json_null());
    return doc;
}

void result_price(struct result *r, const struct price_spec *spec,
                  const struct machine_facts *facts)
{
    price_match_free(&r->price);
    if (!spec)
        return;
    price_match(spec, facts, &r->price);
    if (r->price.priced)
        return;
    const char *host = facts && facts->hostname[0] ? facts->hostname : "unknown";
    log_warn("price file %s names neither this machine (host %s) nor a 'default:': the result "
             "is not priced (mlbench env shows the names it is matched against)", spec->file,
             host);
    summary_warn(&r->summary, "unpriced", "price file %s names neither this machine nor a "
                 "'default:': no cost was computed", spec->file);
}

int result_write_json(json_t *j, const char *path, char *err, size_t errlen)
{
    struct fsx_atomic a;
    FILE *f = fsx_atomic_open(&a, path, err, errlen);
    if (!f)
        return -1;
    /* Buffered: json_dumpfd would make one write() per token. */
    if (json_dumpf(j, f, JSON_INDENT(1) | JSON_ENSURE_ASCII) < 0 || fputc('\n', f) == EOF) {
        snprintf(err, errlen, "cannot write %s: %s", path,
                 strerror(a.error ? a.error : errno ? errno : EIO));
        fsx_atomic_abort(&a);
        return -1;
    }
    return fsx_atomic_commit(&a, err, errlen);
}
