/* doc/result.c: the reader of result documents (see result.h): each member read once with the
 * tolerant getters of util/jsonx, and the answers derived from them. */
#include "doc/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/xalloc.h"

static bool is_true(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

static int depth(const json_t *o)
{
    long long d = jsonx_int(o, "depth", 0);
    return d < 0 ? 0 : d > DOC_MAX_DEPTH ? DOC_MAX_DEPTH : (int)d;
}

/* A new array of n elements of size bytes (never NULL, so that a view of nothing is valid). */
static void *elements(size_t n, size_t size)
{
    return xcalloc(n ? n : 1, size);
}

void doc_stats_read(const json_t *o, struct doc_stats *s)
{
    s->present = json_is_object(o);
    s->n = jsonx_int(o, "n", 0);
    s->outliers = jsonx_int(o, "outliers", 0);
    s->median = jsonx_num(o, "median");
    s->mad = jsonx_num(o, "mad");
    s->mean = jsonx_num(o, "mean");
    s->stddev = jsonx_num(o, "stddev");
    s->min = jsonx_num(o, "min");
    s->max = jsonx_num(o, "max");
    s->cv = jsonx_num(o, "cv");
    s->ci_low = jsonx_num(o, "ci_low");
    s->ci_high = jsonx_num(o, "ci_high");
    s->ci_level = jsonx_num(o, "ci_level");
}

void doc_resources_read(const json_t *a, struct doc_resources *r)
{
    r->json = json_is_array(a) ? a : NULL;
    r->n = json_array_size(a);
    r->v = elements(r->n, sizeof *r->v);
    for (size_t i = 0; i < r->n; i++) {
        const json_t *x = json_array_get(a, i);
        struct doc_resource *d = &r->v[i];
        d->metric = jsonx_str(x, "metric");
        d->labels = jsonx_str(x, "labels");
        d->kind = jsonx_str(x, "kind");
        d->mean = jsonx_num(x, "mean");
        d->peak = jsonx_num(x, "peak");
        d->min = jsonx_num(x, "min");
        d->n = jsonx_int(x, "n", 0);
    }
}

void doc_resources_free(struct doc_resources *r)
{
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* ---- summary ---------------------------------------------------------------------------- */

static void read_spans(const json_t *o, struct doc_spans *s)
{
    s->n = jsonx_int(o, "n", 0);
    s->p50_ns = jsonx_num(o, "p50_ns");
    s->p90_ns = jsonx_num(o, "p90_ns");
    s->p99_ns = jsonx_num(o, "p99_ns");
    s->p999_ns = jsonx_num(o, "p999_ns");
    s->max_ns = jsonx_num(o, "max_ns");
    const json_t *h = jsonx_object(o, "histogram");
    s->histogram.bins_per_octave = jsonx_num(h, "bins_per_octave");
    s->histogram.first_bin = jsonx_num(h, "first_bin");
    s->histogram.counts = jsonx_array(h, "counts");
    s->histogram.n = json_array_size(s->histogram.counts);
}

static void read_stage(const json_t *o, struct doc_stage *st)
{
    st->json = o;
    st->name = jsonx_str(o, "name");
    st->depth = depth(o);
    st->n = jsonx_int(o, "n", 0);
    doc_stats_read(json_object_get(o, "active_ns"), &st->active);
    st->share = jsonx_num(o, "share");
    st->busy_ns_median = jsonx_num(o, "busy_ns_median");
    st->overlap_ns_median = jsonx_num(o, "overlap_ns_median");
    st->span_ns_median = jsonx_num(o, "span_ns_median");
    st->count_median = jsonx_num(o, "count_median");
    read_spans(json_object_get(o, "spans"), &st->spans);
    doc_resources_read(json_object_get(o, "resources"), &st->resources);
}

static void read_counter(const json_t *o, struct doc_counter *c)
{
    c->json = o;
    c->name = jsonx_str(o, "name");
    c->values = jsonx_str(o, "values");
    c->stage = jsonx_str(o, "stage");
    c->count = is_true(o, "count");
    c->stage_mixed = is_true(o, "stage_mixed");
    c->n = jsonx_int(o, "n", 0);
    doc_stats_read(json_object_get(o, "last"), &c->last);
    c->sum_median = jsonx_num(o, "sum_median");
    c->rate_per_s_median = jsonx_num(o, "rate_per_s_median");
    c->stage_rate_per_s_median = jsonx_num(o, "stage_rate_per_s_median");
}

static void read_gpu_clock(const json_t *o, struct doc_gpu_clock *g)
{
    g->present = json_is_object(o);
    g->runs = jsonx_int(o, "runs", 0);
    g->throttled_runs = jsonx_int(o, "throttled_runs", 0);
    g->discarded_runs = jsonx_int(o, "discarded_runs", 0);
    g->scaling_median = jsonx_num(o, "scaling_median");
    g->scaling_min = jsonx_num(o, "scaling_min");
    g->threshold = jsonx_num(o, "threshold");
    g->reasons = jsonx_array(o, "reasons");
}

/* An integer member, or -1 when it is absent or not an integer. */
static long long integer_or_none(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

static void read_ranks(const json_t *o, struct doc_ranks *r)
{
    r->present = o != NULL;
    r->world_size = jsonx_int(o, "world_size", 0);
    r->ranks_dropped = jsonx_int(o, "ranks_dropped", 0);
    r->ranks = jsonx_array(o, "ranks");
    r->n_ranks = json_array_size(r->ranks);
    r->hosts = jsonx_object(o, "hosts");
    const json_t *a = json_object_get(o, "stages");
    r->n_stages = json_array_size(a);
    r->stages = elements(r->n_stages, sizeof *r->stages);
    for (size_t i = 0; i < r->n_stages; i++) {
        const json_t *x = json_array_get(a, i);
        struct doc_rank_stage *st = &r->stages[i];
        st->name = jsonx_str(x, "name");
        st->critical_path_ns = jsonx_num(x, "critical_path_ns");
        st->median_ns = jsonx_num(x, "median_ns");
        st->min_ns = jsonx_num(x, "min_ns");
        st->skew = jsonx_num(x, "skew");
        st->slowest_rank = integer_or_none(x, "slowest_rank");
        st->fastest_rank = integer_or_none(x, "fastest_rank");
        st->ranks = jsonx_int(x, "ranks", 0);
        st->per_rank = jsonx_array(x, "per_rank");
    }
}

static void read_summary(const json_t *o, struct doc_summary *s)
{
    s->json = jsonx_object(o, "summary");
    o = s->json;
    s->runs_measured = jsonx_int(o, "runs_measured", 0);
    s->runs_ok = jsonx_int(o, "runs_ok", 0);
    s->runs_used = jsonx_int(o, "runs_used", 0);
    s->used_failed_runs = is_true(o, "used_failed_runs");
    doc_stats_read(json_object_get(o, "wall_ns"), &s->wall);
    doc_stats_read(json_object_get(o, "user_ns"), &s->user);
    doc_stats_read(json_object_get(o, "sys_ns"), &s->sys);
    doc_stats_read(json_object_get(o, "max_rss_bytes"), &s->max_rss);
    s->cpu_cores = jsonx_num(o, "cpu_cores");
    s->outside_ns = jsonx_num(o, "outside_ns");
    const json_t *a = json_object_get(o, "stages");
    s->n_stages = json_array_size(a);
    s->stages = elements(s->n_stages, sizeof *s->stages);
    for (size_t i = 0; i < s->n_stages; i++)
        read_stage(json_array_get(a, i), &s->stages[i]);
    a = json_object_get(o, "counters");
    s->n_counters = json_array_size(a);
    s->counters = elements(s->n_counters, sizeof *s->counters);
    for (size_t i = 0; i < s->n_counters; i++)
        read_counter(json_array_get(a, i), &s->counters[i]);
    a = json_object_get(o, "metadata");
    s->n_metadata = json_array_size(a);
    s->metadata = elements(s->n_metadata, sizeof *s->metadata);
    for (size_t i = 0; i < s->n_metadata; i++) {
        const json_t *m = json_array_get(a, i);
        s->metadata[i].key = jsonx_str(m, "key");
        s->metadata[i].value = jsonx_str(m, "value");
        s->metadata[i].varies = is_true(m, "varies");
    }
    doc_resources_read(json_object_get(o, "resources"), &s->resources);
    read_gpu_clock(json_object_get(o, "gpu_clock"), &s->gpu_clock);
    read_ranks(jsonx_object(o, "ranks"), &s->ranks);
}

/* ---- runs ------------------------------------------------------------------------------- */

static void read_run(const json_t *o, size_t position, struct doc_run *run)
{
    run->json = o;
    run->position = position;
    run->index = jsonx_int(o, "index", (long long)position);
    run->warmup = is_true(o, "warmup");
    run->status = jsonx_str(o, "status");
    run->ok = run->status && !strcmp(run->status, "ok");
    run->exit_code = jsonx_num(o, "exit_code");
    run->signal = jsonx_str(o, "signal");
    run->error = jsonx_str(o, "error");
    run->prepare_error = jsonx_str(o, "prepare_error");
    run->stderr_tail = jsonx_str(o, "stderr_tail");
    run->start = jsonx_str(o, "start");
    run->wall_ns = jsonx_num(o, "wall_ns");
    run->user_ns = jsonx_num(o, "user_ns");
    run->sys_ns = jsonx_num(o, "sys_ns");
    run->max_rss_bytes = jsonx_num(o, "max_rss_bytes");
    run->outside_ns = jsonx_num(o, "outside_ns");
    run->round_ns = jsonx_num(o, "round_ns");
    const json_t *a = json_object_get(o, "stages");
    run->n_stages = json_array_size(a);
    run->stages = elements(run->n_stages, sizeof *run->stages);
    for (size_t i = 0; i < run->n_stages; i++) {
        const json_t *x = json_array_get(a, i);
        struct doc_run_stage *st = &run->stages[i];
        st->json = x;
        st->name = jsonx_str(x, "name");
        st->depth = depth(x);
        st->active_ns = jsonx_num(x, "active_ns");
        st->busy_ns = jsonx_num(x, "busy_ns");
        st->overlap_ns = jsonx_num(x, "overlap_ns");
        st->first_begin_ns = jsonx_num(x, "first_begin_ns");
        st->last_end_ns = jsonx_num(x, "last_end_ns");
        st->count = jsonx_int(x, "count", 0);
        st->unclosed = jsonx_int(x, "unclosed", 0);
        doc_resources_read(json_object_get(x, "resources"), &st->resources);
    }
    a = json_object_get(o, "counters");
    run->n_counters = json_array_size(a);
    run->counters = elements(run->n_counters, sizeof *run->counters);
    for (size_t i = 0; i < run->n_counters; i++) {
        const json_t *x = json_array_get(a, i);
        struct doc_run_counter *c = &run->counters[i];
        c->json = x;
        c->name = jsonx_str(x, "name");
        c->count = is_true(x, "count");
        c->n = jsonx_int(x, "n", 0);
        c->sum = jsonx_num(x, "sum");
        c->min = jsonx_num(x, "min");
        c->max = jsonx_num(x, "max");
        c->last = jsonx_num(x, "last");
        c->last_ns = jsonx_num(x, "last_ns");
        c->points = jsonx_array(x, "points");
        c->points_stride = jsonx_int(x, "points_stride", 1);
    }
    doc_resources_read(json_object_get(o, "resources"), &run->resources);
    run->metadata = jsonx_object(o, "metadata");
    run->samples = jsonx_object(o, "samples");
    run->spans = jsonx_array(o, "spans");
    run->instants = jsonx_array(o, "instants");
    run->markers = jsonx_object(o, "markers");
    run->ranks = jsonx_array(o, "ranks");
    a = json_object_get(o, "hosts");
    run->n_hosts = json_array_size(a);
    run->hosts = elements(run->n_hosts, sizeof *run->hosts);
    for (size_t i = 0; i < run->n_hosts; i++) {
        const json_t *x = json_array_get(a, i);
        run->hosts[i].host = jsonx_str(x, "host");
        run->hosts[i].ranks = jsonx_array(x, "ranks");
        doc_resources_read(json_object_get(x, "resources"), &run->hosts[i].resources);
        run->hosts[i].stages = jsonx_array(x, "stages");
        run->hosts[i].samples = jsonx_object(x, "samples");
    }
    run->gpu_clock = jsonx_object(o, "gpu_clock");
}

/* ---- the rest --------------------------------------------------------------------------- */

static void read_config(const json_t *o, struct doc_config *c)
{
    c->runs = jsonx_int(o, "runs", -1);
    c->runs_automatic = json_is_null(json_object_get(o, "runs"));
    c->warmup = jsonx_int(o, "warmup", 0);
    c->timeout_s = jsonx_num(o, "timeout_s");
    c->grace_s = jsonx_num(o, "grace_s");
    c->throttle_threshold = jsonx_num(o, "throttle_threshold");
    c->interval_ns = jsonx_int(o, "interval_ns", 100000000);
    c->interval_adaptive = jsonx_bool(o, "interval_adaptive");
    c->prepare = jsonx_str(o, "prepare");
    c->cleanup = jsonx_str(o, "cleanup");
    c->fail_fast = is_true(o, "fail_fast");
    c->show_output = is_true(o, "show_output");
    c->all_gpus = is_true(o, "all_gpus");
    c->discard_throttled = is_true(o, "discard_throttled");
    c->nvtx = is_true(o, "nvtx");
    c->ranks = is_true(o, "ranks");
    c->timings = jsonx_object(o, "timings");
    c->timings_name = jsonx_str(c->timings, "name");
    c->json = json_is_object(o) ? o : NULL;
}

static void read_analysis(const json_t *o, struct doc_analysis *a)
{
    a->present = json_is_object(o);
    a->bottleneck = jsonx_str(o, "bottleneck");
    a->gpus = jsonx_array(o, "gpus");
    const json_t *v = json_object_get(o, "verdicts");
    a->n_verdicts = json_array_size(v);
    a->verdicts = elements(a->n_verdicts, sizeof *a->verdicts);
    for (size_t i = 0; i < a->n_verdicts; i++) {
        const json_t *x = json_array_get(v, i);
        a->verdicts[i].stage = jsonx_str(x, "stage");
        a->verdicts[i].rule = jsonx_str(x, "rule");
        a->verdicts[i].evidence = jsonx_str(x, "evidence");
    }
    const json_t *f = json_object_get(o, "findings");
    a->n_findings = json_array_size(f);
    a->findings = elements(a->n_findings, sizeof *a->findings);
    for (size_t i = 0; i < a->n_findings; i++) {
        const json_t *x = json_array_get(f, i);
        a->findings[i].rule = jsonx_str(x, "rule");
        a->findings[i].stage = jsonx_str(x, "stage");
        a->findings[i].evidence = jsonx_str(x, "evidence");
        a->findings[i].recommendation = jsonx_str(x, "recommendation");
        a->findings[i].saving_ns = jsonx_num(x, "saving_ns");
    }
}

static void read_sampling(const json_t *o, struct doc_sampling *s)
{
    s->present = o != NULL;
    s->interval_ns = jsonx_num(o, "interval_ns");
    s->first_interval_ns = jsonx_num(o, "first_interval_ns");
    s->cpu_ns = jsonx_num(o, "cpu_ns");
    s->cpu_ratio = jsonx_num(o, "cpu_ratio");
    s->errors = jsonx_num(o, "errors");
    s->adaptive = jsonx_bool(o, "adaptive");
    s->sources = jsonx_array(o, "sources");
    s->not_measured = jsonx_array(o, "not_measured");
}

struct doc_result *doc_result_read(const json_t *j)
{
    struct doc_result *r = xcalloc(1, sizeof *r);
    r->json = json_is_object(j) ? j : NULL;
    j = r->json;
    r->schema = jsonx_str(j, "schema");
    r->id = jsonx_str(j, "id");
    r->label = jsonx_str(j, "label");
    r->created = jsonx_str(j, "created");
    r->status = jsonx_str(j, "status");
    r->interrupted_by = jsonx_str(j, "interrupted_by");
    const json_t *mlb = json_object_get(j, "mlbench");
    r->mlbench_version = jsonx_str(mlb, "version");
    r->mlbench_commit = jsonx_str(mlb, "git_commit");
    const json_t *cmd = json_object_get(j, "command");
    const json_t *argv = json_object_get(cmd, "argv");
    r->n_argv = json_array_size(argv);
    r->argv = elements(r->n_argv, sizeof *r->argv);
    for (size_t i = 0; i < r->n_argv; i++)
        r->argv[i] = json_string_value(json_array_get(argv, i));
    r->shell = is_true(cmd, "shell");
    read_config(json_object_get(j, "config"), &r->config);
    r->environment = jsonx_object(j, "environment");
    r->hostname = jsonx_str(r->environment, "hostname");
    r->kernel = jsonx_str(r->environment, "kernel");
    r->machine = jsonx_str(r->environment, "machine");
    r->cpus_online = jsonx_num(r->environment, "cpus_online");
    const json_t *runs = json_object_get(j, "runs");
    r->n_runs = json_array_size(runs);
    r->runs = elements(r->n_runs, sizeof *r->runs);
    for (size_t i = 0; i < r->n_runs; i++)
        read_run(json_array_get(runs, i), i, &r->runs[i]);
    read_summary(j, &r->summary);
    read_analysis(json_object_get(j, "analysis"), &r->analysis);
    const json_t *w = json_object_get(j, "warnings");
    r->n_warnings = json_array_size(w);
    r->warnings = elements(r->n_warnings, sizeof *r->warnings);
    for (size_t i = 0; i < r->n_warnings; i++) {
        r->warnings[i].code = jsonx_str(json_array_get(w, i), "code");
        r->warnings[i].message = jsonx_str(json_array_get(w, i), "message");
    }
    read_sampling(json_object_get(j, "sampling"), &r->sampling);
    r->markers_outside_runs = jsonx_int(j, "markers_outside_runs", 0);
    r->cost = jsonx_object(j, "cost");
    r->load = jsonx_object(j, "load");
    const json_t *sw = jsonx_object(j, "sweep");
    r->sweep.present = sw != NULL;
    r->sweep.id = jsonx_str(sw, "id");
    r->sweep.name = jsonx_str(sw, "name");
    r->sweep.point = jsonx_int(sw, "point", -1);
    r->sweep.parameters = jsonx_object(sw, "parameters");
    return r;
}

void doc_result_free(struct doc_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_runs; i++) {
        for (size_t k = 0; k < r->runs[i].n_stages; k++)
            doc_resources_free(&r->runs[i].stages[k].resources);
        free(r->runs[i].stages);
        free(r->runs[i].counters);
        for (size_t k = 0; k < r->runs[i].n_hosts; k++)
            doc_resources_free(&r->runs[i].hosts[k].resources);
        free(r->runs[i].hosts);
        doc_resources_free(&r->runs[i].resources);
    }
    free(r->runs);
    for (size_t i = 0; i < r->summary.n_stages; i++)
        doc_resources_free(&r->summary.stages[i].resources);
    free(r->summary.stages);
    free(r->summary.counters);
    free(r->summary.metadata);
    free(r->summary.ranks.stages);
    doc_resources_free(&r->summary.resources);
    free(r->analysis.verdicts);
    free(r->analysis.findings);
    free(r->warnings);
    free(r->argv);
    free(r);
}

bool doc_cost_read(const json_t *cost, struct doc_cost *c)
{
    memset(c, 0, sizeof *c);
    if (!json_is_object(cost))
        return false;
    c->currency = jsonx_str(cost, "currency");
    c->source = jsonx_str(cost, "source");
    c->price_per_hour = jsonx_num(cost, "price_per_hour");
    const json_t *file = json_object_get(cost, "price_file");
    c->price_file = json_is_object(file);
    c->price_file_path = jsonx_str(file, "path");
    c->price_file_entry = jsonx_str(file, "entry");
    c->price_file_rule = jsonx_str(file, "rule");
    const json_t *run = json_object_get(cost, "run");
    c->run_median = jsonx_num(run, "median");
    c->run_ci_low = jsonx_num(run, "ci_low");
    c->run_ci_high = jsonx_num(run, "ci_high");
    const json_t *a = json_object_get(cost, "per_unit");
    c->n_per_unit = json_array_size(a);
    c->per_unit = elements(c->n_per_unit, sizeof *c->per_unit);
    for (size_t i = 0; i < c->n_per_unit; i++) {
        const json_t *u = json_array_get(a, i);
        c->per_unit[i].counter = jsonx_str(u, "counter");
        c->per_unit[i].description = jsonx_str(u, "description");
        c->per_unit[i].per = jsonx_num(u, "per");
        c->per_unit[i].median = jsonx_num(u, "median");
    }
    a = json_object_get(cost, "to_target");
    c->n_to_target = json_array_size(a);
    c->to_target = elements(c->n_to_target, sizeof *c->to_target);
    for (size_t i = 0; i < c->n_to_target; i++) {
        const json_t *t = json_array_get(a, i);
        c->to_target[i].counter = jsonx_str(t, "counter");
        c->to_target[i].median = jsonx_num(t, "median");
        c->to_target[i].ci_low = jsonx_num(t, "ci_low");
        c->to_target[i].ci_high = jsonx_num(t, "ci_high");
    }
    return true;
}

void doc_cost_free(struct doc_cost *c)
{
    free(c->per_unit);
    free(c->to_target);
    memset(c, 0, sizeof *c);
}

/* ---- derived answers -------------------------------------------------------------------- */

const char *doc_result_name(const struct doc_result *r)
{
    if (r->label && *r->label)
        return r->label;
    return r->id ? r->id : "(no id)";
}

struct run_wall {
    int index;
    double wall_ns;
};

static int by_wall(const void *a, const void *b)
{
    const struct run_wall *x = a, *y = b;
    if (x->wall_ns != y->wall_ns)
        return x->wall_ns < y->wall_ns ? -1 : 1;
    return x->index - y->index;
}

int doc_result_median_run(const struct doc_result *r)
{
    if (r->n_runs == 0)
        return -1;
    struct run_wall *c = xcalloc(r->n_runs, sizeof *c);
    size_t nc = 0;
    /* pass 0: measured and ok; 1: measured; 2: any */
    for (int pass = 0; pass < 3 && nc == 0; pass++)
        for (size_t i = 0; i < r->n_runs; i++) {
            const struct doc_run *run = &r->runs[i];
            if ((pass < 2 && run->warmup) || (pass == 0 && !run->ok))
                continue;
            c[nc].index = (int)i;
            c[nc].wall_ns = isfinite(run->wall_ns) ? run->wall_ns : 0;
            nc++;
        }
    qsort(c, nc, sizeof *c, by_wall);
    int index = c[(nc - 1) / 2].index;
    free(c);
    return index;
}

const struct doc_stage *doc_result_stage(const struct doc_result *r, const char *name)
{
    for (size_t i = 0; i < r->summary.n_stages; i++)
        if (r->summary.stages[i].name && !strcmp(r->summary.stages[i].name, name))
            return &r->summary.stages[i];
    return NULL;
}

const struct doc_counter *doc_result_counter(const struct doc_result *r, const char *name)
{
    for (size_t i = 0; i < r->summary.n_counters; i++)
        if (r->summary.counters[i].name && !strcmp(r->summary.counters[i].name, name))
            return &r->summary.counters[i];
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double doc_result_before_first_stage(const struct doc_result *r)
{
    double *v = xmalloc((r->n_runs + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const struct doc_run *run = &r->runs[i];
        double first = NAN;
        for (size_t k = 0; run->ok && !run->warmup && k < run->n_stages; k++)
            if (run->stages[k].first_begin_ns >= 0 && !(first <= run->stages[k].first_begin_ns))
                first = run->stages[k].first_begin_ns;
        if (isfinite(first))
            v[n++] = first;
    }
    double m = NAN;
    if (n) {
        qsort(v, n, sizeof *v, cmp_double);
        m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    free(v);
    return m;
}

double doc_result_stage_share(const struct doc_result *r, const char *name)
{
    if (!strcmp(name, "total"))
        return 1;
    const struct doc_stage *st = doc_result_stage(r, name);
    return st ? st->share : NAN;
}

const char *doc_result_workdir_commit(const struct doc_result *r)
{
    const json_t *env = r->environment;
    const char *c = jsonx_str(json_object_get(env, "git"), "commit");
    if (!c)
        c = jsonx_str(env, "git_commit");
    if (!c)
        c = jsonx_str(json_object_get(env, "workdir"), "git_commit");
    return c;
}

bool doc_result_recorded(const struct doc_result *r)
{
    return r->config.timings != NULL;
}

const struct doc_resource *doc_resource_find(const struct doc_resources *r, const char *metric,
                                             const char *labels)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct doc_resource *x = &r->v[i];
        if (x->metric && !strcmp(x->metric, metric) &&
            (!labels || (x->labels && !strcmp(x->labels, labels))))
            return x;
    }
    return NULL;
}

static double mean_of(const struct doc_resources *r, const char *metric, const char *labels)
{
    const struct doc_resource *x = doc_resource_find(r, metric, labels);
    return x ? x->mean : NAN;
}

static double peak_of(const struct doc_resources *r, const char *metric, const char *labels)
{
    const struct doc_resource *x = doc_resource_find(r, metric, labels);
    return x ? x->peak : NAN;
}

void doc_figures(const struct doc_resources *r, const json_t *gpus, struct doc_figures *f)
{
    f->cpu_cores = mean_of(r, "process_cpu_seconds_total", NULL);
    f->rss_peak_bytes = peak_of(r, "process_resident_bytes", NULL);
    f->read_bps = mean_of(r, "process_read_bytes_total", NULL);
    f->write_bps = mean_of(r, "process_written_bytes_total", NULL);
    f->iowait = mean_of(r, "system_cpu_iowait_ratio", NULL);
    f->io_blocked = mean_of(r, "process_io_wait_seconds_total", NULL);
    if (!isfinite(f->io_blocked))
        f->io_blocked = mean_of(r, "process_io_blocked_tasks", NULL);
    if (isfinite(f->io_blocked))
        f->io_blocked = fmin(1, f->io_blocked);
    f->samples = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].n > 0 && (size_t)r->v[i].n > f->samples)
            f->samples = (size_t)r->v[i].n;
    /* GPU figures over the GPUs in gpus, as result/resources.c computes them for the analysis */
    double u = 0, p = 0, sm = 0;
    int nu = 0, np = 0, nsm = 0;
    f->gpu_mem_peak_bytes = NAN;
    for (size_t g = 0; g < json_array_size(gpus); g++) {
        char labels[32];
        snprintf(labels, sizeof labels, "gpu=\"%lld\"",
                 (long long)json_integer_value(json_array_get(gpus, g)));
        double v = mean_of(r, "gpu_utilization_ratio", labels);
        if (isfinite(v))
            u += v, nu++;
        v = mean_of(r, "gpu_sm_active_ratio", labels);
        if (isfinite(v))
            sm += v, nsm++;
        v = mean_of(r, "gpu_power_watts", labels);
        if (isfinite(v))
            p += v, np++;
        v = peak_of(r, "gpu_memory_used_bytes", labels);
        if (isfinite(v) && !(f->gpu_mem_peak_bytes >= v))
            f->gpu_mem_peak_bytes = v;
    }
    f->gpu_util = nu ? u / nu : NAN;
    f->gpu_sm_active = nsm ? sm / nsm : NAN;
    f->gpu_power_watts = np ? p : NAN;
}

const json_t *doc_run_series(const struct doc_run *run, const char *metric, const char *labels)
{
    const json_t *series = json_object_get(run->samples, "series");
    for (size_t i = 0; i < json_array_size(series); i++) {
        const json_t *s = json_array_get(series, i);
        const char *m = jsonx_str(s, "metric"), *l = jsonx_str(s, "labels");
        if (m && !strcmp(m, metric) && (!labels || (l && !strcmp(l, labels))))
            return s;
    }
    return NULL;
}

size_t doc_run_n_spans(const struct doc_run *run)
{
    return json_array_size(run->spans);
}

void doc_run_span(const struct doc_run *run, size_t i, struct doc_span *s)
{
    const json_t *x = json_array_get(run->spans, i);
    s->name = jsonx_str(x, "name");
    s->pid = jsonx_int(x, "pid", 0);
    s->tid = jsonx_int(x, "tid", 0);
    s->depth = jsonx_int(x, "depth", 0);
    s->start_ns = jsonx_num(x, "start_ns");
    s->end_ns = jsonx_num(x, "end_ns");
    s->closed = !json_is_false(json_object_get(x, "closed"));
}

size_t doc_run_n_instants(const struct doc_run *run)
{
    return json_array_size(run->instants);
}

void doc_run_instant(const struct doc_run *run, size_t i, struct doc_instant *e)
{
    const json_t *x = json_array_get(run->instants, i);
    e->name = jsonx_str(x, "name");
    e->pid = jsonx_int(x, "pid", 0);
    e->tid = jsonx_int(x, "tid", 0);
    e->t_ns = jsonx_num(x, "t_ns");
}

size_t doc_run_n_samples(const struct doc_run *run)
{
    return json_array_size(json_object_get(run->samples, "t_ns"));
}

double doc_run_sample_t(const struct doc_run *run, size_t i)
{
    return jsonx_number(json_array_get(json_object_get(run->samples, "t_ns"), i));
}

size_t doc_run_n_series(const struct doc_run *run)
{
    return json_array_size(json_object_get(run->samples, "series"));
}

void doc_series_read(const json_t *x, struct doc_series *s)
{
    s->metric = jsonx_str(x, "metric");
    s->labels = jsonx_str(x, "labels");
    s->kind = jsonx_str(x, "kind");
    s->source = jsonx_str(x, "source");
    s->max_rate = jsonx_num(x, "max_rate");
    s->values = json_object_get(x, "values");
}

void doc_run_series_at(const struct doc_run *run, size_t i, struct doc_series *s)
{
    doc_series_read(json_array_get(json_object_get(run->samples, "series"), i), s);
}

double doc_series_value(const struct doc_series *s, size_t i)
{
    return jsonx_number(json_array_get(s->values, i));
}

size_t doc_counter_n_points(const struct doc_run_counter *c)
{
    return json_array_size(c->points);
}

void doc_counter_point(const struct doc_run_counter *c, size_t i, struct doc_point *p)
{
    const json_t *x = json_array_get(c->points, i);
    p->t_ns = jsonx_number(json_array_get(x, 0));
    p->value = jsonx_number(json_array_get(x, 1));
    p->sum = jsonx_number(json_array_get(x, 2));
}

double doc_histogram_count(const struct doc_histogram *h, size_t i)
{
    return jsonx_number(json_array_get(h->counts, i));
}
