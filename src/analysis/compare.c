/* compare: results side by side with statistics, verdicts and gates (see compare.h; the method
 * and its references are in docs/compare.md). */
#include "analysis/compare.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare_cost.h"
#include "analysis/compare_latency.h"
#include "analysis/compare_method.h"
#include "analysis/compare_quality.h"
#include "analysis/compare_scaling.h"
#include "analysis/significance.h"
#include "analysis/stats.h"
#include "doc/comparison.h"
#include "util/xalloc.h"

/* ---- small helpers ---- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static const char *str_or(const char *s, const char *fallback)
{
    return s ? s : fallback;
}

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* ---- per-run values out of a result ---- */

struct sample {
    double *v;
    size_t n;
};

/* The values of one quantity over the measured ok runs of result: runs[].wall_ns for stage
 * NULL, else the stage's runs[].stages[].active_ns (runs without the stage are skipped). */
static struct sample run_values(const struct doc_result *result, const char *stage)
{
    struct sample s = {xmalloc((result->n_runs + 1) * sizeof *s.v), 0};
    for (size_t i = 0; i < result->n_runs; i++) {
        const struct doc_run *run = &result->runs[i];
        if (!compare_run_counts(run))
            continue;
        double v = NAN;
        if (!stage) {
            v = run->wall_ns;
        } else {
            for (size_t k = 0; k < run->n_stages; k++)
                if (run->stages[k].name && !strcmp(run->stages[k].name, stage)) {
                    v = run->stages[k].active_ns;
                    break;
                }
        }
        if (isfinite(v))
            s.v[s.n++] = v;
    }
    return s;
}

void compare_two(const struct doc_result *base, const struct doc_result *cand, const char *stage,
                 const struct compare_options *opt, struct compare_decision *d,
                 double *change_pct)
{
    struct compare_options defaults;
    if (!opt) {
        compare_options_default(&defaults);
        opt = &defaults;
    }
    struct sample b = run_values(base, stage), c = run_values(cand, stage);
    double mb = b.n ? stats_median(b.v, b.n) : NAN, mc = c.n ? stats_median(c.v, c.n) : NAN;
    *change_pct = mb > 0 && isfinite(mc) ? (mc - mb) / mb * 100 : NAN;
    double lo = NAN, hi = NAN;
    struct significance_mwu mwu = {NAN, NAN, 0};
    if (b.n >= 2 && c.n >= 2) {
        significance_mann_whitney(b.v, b.n, c.v, c.n, &mwu);
        significance_bootstrap_ratio(b.v, b.n, c.v, c.n, opt->resamples, opt->seed,
                                     1 - opt->alpha, &lo, &hi);
    }
    compare_decide(opt, b.v, b.n, c.v, c.n, *change_pct, mwu.p, lo, hi, d);
    free(b.v);
    free(c.v);
}

/* ---- one row of the stage table ---- */

/* A faster or slower verdict that a disturbance of the slower side could explain becomes
 * "unreliable" (docs/compare.md#measurement-quality-unreliable): sets the row's verdict,
 * statistical_verdict and unreliable_reason. */
static void judge_quality(json_t *row, const char *verdict, const struct doc_result *base,
                          const struct doc_result *cand, const char *stage, unsigned *hits)
{
    bool faster = !strcmp(verdict, "faster"), slower = !strcmp(verdict, "slower");
    char *why = faster || slower ? compare_explain(base, cand, stage, slower, hits) : NULL;
    json_object_set_new(row, "statistical_verdict", why ? json_string(verdict) : json_null());
    json_object_set_new(row, "unreliable_reason", why ? json_string(why) : json_null());
    if (why)
        json_object_set_new(row, "verdict", json_string("unreliable"));
    free(why);
}

/* The comparison of one quantity; stage NULL is the total (row name "total"). */
static json_t *stage_row(const struct doc_result *base, const struct doc_result *cand,
                         const char *stage, int in_base, int in_cand,
                         const struct compare_options *opt, unsigned *hits)
{
    struct sample b = {NULL, 0}, c = {NULL, 0};
    if (in_base)
        b = run_values(base, stage);
    if (in_cand)
        c = run_values(cand, stage);
    double mb = b.n ? stats_median(b.v, b.n) : NAN;
    double mc = c.n ? stats_median(c.v, c.n) : NAN;
    double change = mb > 0 && isfinite(mc) ? (mc - mb) / mb * 100 : NAN;
    double speedup = mc > 0 && isfinite(mb) ? mb / mc : NAN;
    double ci_lo = NAN, ci_hi = NAN;
    struct significance_mwu mwu = {NAN, NAN, 0};
    struct compare_decision d = {.lo = NAN, .hi = NAN, .level = NAN};
    if (!in_base) {
        d.verdict = "missing in baseline";
    } else if (!in_cand) {
        d.verdict = "missing in candidate";
    } else {
        if (b.n >= 2 && c.n >= 2) {
            significance_mann_whitney(b.v, b.n, c.v, c.n, &mwu);
            significance_bootstrap_ratio(b.v, b.n, c.v, c.n, opt->resamples, opt->seed,
                                         1 - opt->alpha, &ci_lo, &ci_hi);
        }
        compare_decide(opt, b.v, b.n, c.v, c.n, change, mwu.p, ci_lo, ci_hi, &d);
    }
    const char *verdict = d.verdict;
    json_t *row = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:s, s:o}",
                            "name", stage ? stage : "total", "baseline_median_ns", jnum(mb),
                            "candidate_median_ns", jnum(mc), "change_pct", jnum(change),
                            "speedup", jnum(speedup), "ratio_ci_low", jnum(d.lo),
                            "ratio_ci_high", jnum(d.hi), "p_value", jnum(mwu.p),
                            "n_baseline", (json_int_t)b.n, "n_candidate", (json_int_t)c.n,
                            "verdict", verdict, "test",
                            isfinite(mwu.p) ? json_string(mwu.exact ? "exact"
                                                                    : "normal approximation")
                                            : json_null());
    free(b.v);
    free(c.v);
    json_object_set_new(row, "ratio_ci_level", jnum(isfinite(d.lo) ? d.level : NAN));
    json_object_set_new(row, "decided_by", jstr_or_null(d.decided_by));
    json_object_set_new(row, "runs_needed",
                        d.runs_needed ? json_integer(d.runs_needed) : json_null());
    json_object_set_new(row, "settle_pct", jnum(d.runs_needed ? d.settle_pct : NAN));
    judge_quality(row, verdict, base, cand, stage, hits);
    const struct doc_stage *st = stage ? doc_result_stage(in_base ? base : cand, stage) : NULL;
    json_object_set_new(row, "depth", json_integer(st ? st->depth : 0));
    json_object_set_new(row, "latency", stage && in_base && in_cand
                                            ? compare_latency(base, cand, stage, opt, hits)
                                            : json_null());
    return row;
}

/* Stages of the baseline in its order, then those only the candidate has, then the total;
 * *common is the number of stages both have. */
static json_t *stage_rows(const struct doc_result *base, const struct doc_result *cand,
                          const struct compare_options *opt, size_t *common, unsigned *hits)
{
    *common = 0;
    json_t *rows = json_array();
    for (size_t i = 0; i < base->summary.n_stages; i++) {
        const char *name = base->summary.stages[i].name;
        if (!name)
            continue;
        int both = doc_result_stage(cand, name) != NULL;
        *common += (size_t)both;
        json_array_append_new(rows, stage_row(base, cand, name, 1, both, opt, hits));
    }
    for (size_t i = 0; i < cand->summary.n_stages; i++) {
        const char *name = cand->summary.stages[i].name;
        if (name && !doc_result_stage(base, name))
            json_array_append_new(rows, stage_row(base, cand, name, 0, 1, opt, hits));
    }
    json_array_append_new(rows, stage_row(base, cand, NULL, 1, 1, opt, hits));
    return rows;
}

/* ---- counters, metadata, resources ---- */

/* A list of a summary side_by_side walks, read by index: its counters or its metadata. */
struct listing {
    const char *field;     /* the member that names a row: "name" or "key" */
    size_t (*count)(const struct doc_summary *s);
    const char *(*name)(const struct doc_summary *s, size_t i);
    json_t *(*value)(const struct doc_summary *s, size_t i); /* a new reference */
};

static size_t counter_count(const struct doc_summary *s)
{
    return s->n_counters;
}

static const char *counter_name(const struct doc_summary *s, size_t i)
{
    return s->counters[i].name;
}

/* A counter's figure per run: the sum for counts (images: the total per run), else the last
 * value (accuracy, loss); the median over the runs. */
static json_t *counter_value(const struct doc_summary *s, size_t i)
{
    const struct doc_counter *c = &s->counters[i];
    return jnum(c->count ? c->sum_median : c->last.median);
}

static size_t metadata_count(const struct doc_summary *s)
{
    return s->n_metadata;
}

static const char *metadata_key(const struct doc_summary *s, size_t i)
{
    return s->metadata[i].key;
}

static json_t *metadata_value(const struct doc_summary *s, size_t i)
{
    return jstr_or_null(s->metadata[i].value);
}

static const struct listing counters = {"name", counter_count, counter_name, counter_value};
static const struct listing metadata = {"key", metadata_count, metadata_key, metadata_value};

/* The index of the first item of s named name, or -1. */
static long find_item(const struct listing *l, const struct doc_summary *s, const char *name)
{
    for (size_t i = 0; i < l->count(s); i++)
        if (l->name(s, i) && !strcmp(l->name(s, i), name))
            return (long)i;
    return -1;
}

/* Rows {field: name, "baseline": x, "candidate": y} over the union of the names of a list of
 * the two summaries, the baseline's order first (null: absent on that side). */
static json_t *side_by_side(const struct listing *l, const struct doc_summary *sb,
                            const struct doc_summary *sc)
{
    json_t *rows = json_array();
    for (int pass = 0; pass < 2; pass++) {
        const struct doc_summary *own = pass ? sc : sb, *other = pass ? sb : sc;
        for (size_t i = 0; i < l->count(own); i++) {
            const char *name = l->name(own, i);
            if (!name)
                continue;
            long twin = find_item(l, other, name);
            if (pass && twin >= 0)
                continue; /* already listed from the baseline */
            json_t *mine = l->value(own, i);
            json_t *theirs = twin >= 0 ? l->value(other, (size_t)twin) : json_null();
            json_array_append_new(rows, json_pack("{s:s, s:o, s:o}", l->field, name, "baseline",
                                                  pass ? theirs : mine, "candidate",
                                                  pass ? mine : theirs));
        }
    }
    return rows;
}

/* The resource figures shown side by side: the statistic that says most for each metric. */
static const struct {
    const char *metric;
    bool peak;             /* the peak, else the mean */
} shown_resources[] = {
    {"process_cpu_seconds_total", false}, /* a rate: CPU cores busy */
    {"process_resident_bytes", true},
    {"gpu_utilization_ratio", false},
    {"gpu_memory_used_bytes", true},
};

/* The member of resources with metric and labels (absent labels read as ""), or NULL. */
static const struct doc_resource *find_resource(const struct doc_resources *resources,
                                                const char *metric, const char *labels)
{
    for (size_t i = 0; i < resources->n; i++) {
        const struct doc_resource *r = &resources->v[i];
        if (r->metric && !strcmp(r->metric, metric) && !strcmp(r->labels ? r->labels : "", labels))
            return r;
    }
    return NULL;
}

static json_t *resource_value(const struct doc_resource *r, bool peak)
{
    return jnum(!r ? NAN : peak ? r->peak : r->mean);
}

static void resource_rows_for(json_t *rows, const char *stage, const struct doc_resources *rb,
                              const struct doc_resources *rc)
{
    for (size_t k = 0; k < sizeof shown_resources / sizeof shown_resources[0]; k++) {
        const char *metric = shown_resources[k].metric;
        bool peak = shown_resources[k].peak;
        for (int pass = 0; pass < 2; pass++) {
            const struct doc_resources *own = pass ? rc : rb, *other = pass ? rb : rc;
            for (size_t i = 0; i < own->n; i++) {
                const struct doc_resource *r = &own->v[i];
                if (!r->metric || strcmp(r->metric, metric))
                    continue;
                const char *labels = r->labels ? r->labels : "";
                const struct doc_resource *twin = find_resource(other, metric, labels);
                if (pass && twin)
                    continue;
                const struct doc_resource *eb = pass ? twin : r, *ec = pass ? r : twin;
                json_t *name = *labels ? json_sprintf("%s{%s}", metric, labels)
                                       : json_string(metric);
                json_array_append_new(rows, json_pack(
                    "{s:s, s:o, s:s, s:o, s:o}", "stage", stage, "metric", name, "statistic",
                    peak ? "peak" : "mean", "baseline", resource_value(eb, peak), "candidate",
                    resource_value(ec, peak)));
            }
        }
    }
}

/* Resources of the stages both results have, then of the whole run ("total"). */
static json_t *resource_rows(const struct doc_result *base, const struct doc_result *cand)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < base->summary.n_stages; i++) {
        const struct doc_stage *st = &base->summary.stages[i];
        const struct doc_stage *twin = st->name ? doc_result_stage(cand, st->name) : NULL;
        if (twin)
            resource_rows_for(rows, st->name, &st->resources, &twin->resources);
    }
    resource_rows_for(rows, "total", &base->summary.resources, &cand->summary.resources);
    return rows;
}

/* ---- environment ---- */

/* An array of {"name": N, "value": V} objects with distinct names (how envinfo records
 * environment variables): keyed by name rather than by position, so that one variable more on
 * one side does not shift every other. */
static int is_name_value_list(const json_t *a)
{
    size_t i;
    const json_t *e;
    if (!json_array_size(a))
        return 0;
    json_array_foreach(a, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!name || json_object_size(e) != 2 || !json_object_get(e, "value"))
            return 0;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(name, json_string_value(json_object_get(json_array_get(a, k), "name"))))
                return 0;
    }
    return 1;
}

/* Every scalar under v, as key "a.b[2].c" -> value, into out (an object, insertion order). */
static void env_flatten(const json_t *v, const char *prefix, json_t *out)
{
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach((json_t *)v, key, child) {
            char *name = *prefix ? xasprintf("%s.%s", prefix, key) : xstrdup(key);
            env_flatten(child, name, out);
            free(name);
        }
    } else if (json_is_array(v)) {
        int by_name = is_name_value_list(v);
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child) {
            char *name = by_name ? xasprintf("%s.%s", prefix,
                                             json_string_value(json_object_get(child, "name")))
                                 : xasprintf("%s[%zu]", prefix, i);
            env_flatten(by_name ? json_object_get(child, "value") : child, name, out);
            free(name);
        }
    } else if (*prefix) {
        json_object_set(out, prefix, (json_t *)v);
    }
}

/* Word lists of compare_env_key_matters(), matched against the words of a key (lower case,
 * split at anything that is not a letter or digit), strongest rule first. docs/compare.md
 * lists them for users. */
static const char *const env_never[] = { /* identity, state and what is being changed */
    "hostname", "host", "nodename", "uuid", "serial", "pci", "bus", "busid", "uptime", "boot",
    "time", "date", "timestamp", "created", "pid", "git", "commit", "branch", "dirty", "mlbench",
    "temperature", "fan", NULL,
};
static const char *const env_always[] = {
    "variables", "limit", "governor", "threads", "omp", "driver", "cuda", "version", "model", NULL,
};
static const char *const env_informational[] = {
    "user", "username", "home", "pwd", "cwd", "path", "shell", "term", "display", "ssh", "lang",
    "power", "load", "loadavg", "free", "available", "used", "utilization", "mhz", "khz", "freq",
    "frequency", "clock", "clocks", NULL,
};
static const char *const env_matters[] = {
    "cpu", "cpus", "processor", "cores", "sockets", "affinity", "numa", "smt", "turbo", "boost",
    "features", "gpu", "gpus", "device", "devices", "cudnn", "cublas", "nccl", "rocm", "kernel",
    "machine", "arch", "architecture", "os", "libc", "compiler", "python", "torch", "pytorch",
    "tensorflow", "tf", "jax", "numpy", "onnxruntime", "blas", "openblas", "mkl", "lapack",
    "library", "libraries", "preload", "memory", "mem", "visible", "precision", "capability",
    "container", "virtualization", "hypervisor", "vm", NULL,
};

static int word_in(const char *word, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(word, *list))
            return 1;
    return 0;
}

int compare_env_key_matters(const char *key)
{
    int never = 0, always = 0, info = 0, matters = 0;
    char word[64];
    const char *p = key;
    while (*p) {
        while (*p && !isalnum((unsigned char)*p))
            p++;
        size_t len = 0;
        while (*p && isalnum((unsigned char)*p)) {
            if (len + 1 < sizeof word)
                word[len++] = (char)tolower((unsigned char)*p);
            p++;
        }
        word[len] = '\0';
        if (!len)
            break;
        never |= word_in(word, env_never);
        always |= word_in(word, env_always);
        info |= word_in(word, env_informational);
        matters |= word_in(word, env_matters);
    }
    if (never)
        return 0;
    return always || (!info && matters);
}

/* A row of the differences; a key that matters makes the results not like for like. */
static json_t *env_row(const char *key, const json_t *b, const json_t *c, int *like_for_like)
{
    int matters = compare_env_key_matters(key);
    if (matters)
        *like_for_like = 0;
    return json_pack("{s:s, s:O, s:O, s:b}", "key", key, "baseline", b ? b : json_null(),
                     "candidate", c ? c : json_null(), "matters", matters);
}

static json_t *env_differences(const struct doc_result *base, const struct doc_result *cand,
                               int *like_for_like)
{
    json_t *fb = json_object(), *fc = json_object(), *rows = json_array();
    env_flatten(base->environment, "", fb);
    env_flatten(cand->environment, "", fc);
    const char *key;
    json_t *v;
    *like_for_like = 1;
    json_object_foreach(fb, key, v) {
        const json_t *w = json_object_get(fc, key);
        if (!w || !json_equal(v, (json_t *)w))
            json_array_append_new(rows, env_row(key, v, w, like_for_like));
    }
    json_object_foreach(fc, key, v)
        if (!json_object_get(fb, key))
            json_array_append_new(rows, env_row(key, NULL, v, like_for_like));
    json_decref(fb);
    json_decref(fc);
    return rows;
}

/* ---- the document ---- */

static json_t *identity(const struct doc_result *result, const char *path)
{
    return json_pack("{s:o, s:o, s:o}", "id", jstr_or_null(result->id), "label",
                     jstr_or_null(result->label), "path", jstr_or_null(path));
}

json_t *compare_results(json_t *const *results, const char *const *paths, size_t n,
                        const struct compare_options *opt)
{
    struct compare_options defaults;
    if (!opt) {
        compare_options_default(&defaults);
        opt = &defaults;
    }
    if (n < 2 || !(opt->alpha > 0 && opt->alpha < 1) || !(opt->min_effect_pct >= 0) ||
        !isfinite(opt->min_effect_pct) || opt->resamples == 0 || opt->seed > INT64_MAX)
        return NULL;
    struct doc_result **docs = xcalloc(n, sizeof *docs);
    for (size_t i = 0; i < n; i++)
        docs[i] = doc_result_read(results[i]);
    const struct doc_result *base = docs[0];
    json_t *cands = json_array();
    for (size_t i = 1; i < n; i++) {
        const struct doc_result *cand = docs[i];
        int like = 1;
        json_t *env = env_differences(base, cand, &like);
        json_t *c = identity(cand, paths ? paths[i] : NULL);
        json_object_set_new(c, "like_for_like", json_boolean(like));
        size_t common;
        unsigned hits = 0;
        json_object_set_new(c, "stages", stage_rows(base, cand, opt, &common, &hits));
        json_object_set_new(c, "common_stages", json_integer((json_int_t)common));
        json_object_set_new(c, "quality", compare_quality(base, cand));
        json_object_set_new(c, "load", compare_load((const struct doc_result *const *)&docs[0],
                                                    1, (const struct doc_result *const *)&docs[i],
                                                    1, opt, &hits));
        char *clean = compare_clean_answer(hits);
        json_object_set_new(c, "clean_answer", jstr_or_null(clean));
        free(clean);
        json_object_set_new(c, "counters", side_by_side(&counters, &base->summary,
                                                        &cand->summary));
        json_object_set_new(c, "metadata", side_by_side(&metadata, &base->summary,
                                                        &cand->summary));
        json_object_set_new(c, "resources", resource_rows(base, cand));
        json_object_set_new(c, "cost", compare_cost(base, cand));
        json_object_set_new(c, "scaling", compare_scaling(base, cand));
        json_object_set_new(c, "environment_differences", env);
        json_array_append_new(cands, c);
    }
    json_t *doc = json_pack("{s:s, s:f, s:f, s:f, s:I, s:I, s:o, s:o}", "schema",
                            DOC_COMPARISON_SCHEMA, "alpha", opt->alpha, "min_effect_pct",
                            opt->min_effect_pct, "ci_level", 1 - opt->alpha,
                            "bootstrap_resamples", (json_int_t)opt->resamples, "bootstrap_seed",
                            (json_int_t)opt->seed, "baseline",
                            identity(base, paths ? paths[0] : NULL), "candidates", cands);
    for (size_t i = 0; i < n; i++)
        doc_result_free(docs[i]);
    free(docs);
    return doc;
}

/* ---- gates ---- */

struct msgbuf {
    char *s;
    size_t cap, len;
};

static void msg_add(struct msgbuf *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void msg_add(struct msgbuf *m, const char *fmt, ...)
{
    if (!m->cap || m->len + 1 >= m->cap)
        return;
    if (m->len) {
        m->s[m->len++] = '\n';
        m->s[m->len] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(m->s + m->len, m->cap - m->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        m->len = m->len + (size_t)w < m->cap ? m->len + (size_t)w : m->cap - 1;
}

static const char *candidate_name(const struct doc_cmp_candidate *c)
{
    const char *s = c->who.label;
    if (!s)
        s = c->who.path;
    if (!s)
        s = c->who.id;
    return s ? s : "candidate";
}

/* "; changes from -20.0 % to +8.0 % are compatible with these runs (3 and 3 runs, a 90 %
 * interval); about 34 runs a side would settle it to +-6 %" into buf */
static void compatible(const struct doc_cmp_stage *row, char *buf, size_t len)
{
    int w = snprintf(buf, len, "; changes from %+.1f %% to %+.1f %% are compatible with these "
                     "runs (%lld and %lld runs, a %.0f %% interval)",
                     (row->ratio_ci_low - 1) * 100, (row->ratio_ci_high - 1) * 100,
                     row->n_baseline, row->n_candidate,
                     100 * (isfinite(row->ratio_ci_level) ? row->ratio_ci_level : 0.95));
    size_t at = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
    if (row->runs_needed > 0)
        snprintf(buf + at, len - at, "; about %lld runs a side would settle it to +-%.0f %%",
                 row->runs_needed, row->settle_pct);
    else if (row->runs_needed < 0)
        snprintf(buf + at, len - at, "; more than 10000 runs a side would be needed at this "
                 "noise: measure on a quieter machine");
}

static int slower_gate(const struct doc_cmp_candidate *c, const struct compare_gates *g,
                       double min_effect_pct, struct msgbuf *m)
{
    const char *who = candidate_name(c), *stage = g->stage ? g->stage : "total";
    const struct doc_cmp_stage *row = doc_cmp_stage(c, stage);
    if (!row) {
        msg_add(m, "%s: no stage '%s' in either result: --fail-if-slower cannot check it", who,
                stage);
        return COMPARE_GATE_FAIL;
    }
    const char *verdict = str_or(row->verdict, "");
    double change = row->change_pct;
    /* a change below the minimum effect does not count, whatever the threshold */
    double limit = 1 + fmax(g->fail_if_slower_pct, min_effect_pct) / 100;
    if (!strncmp(verdict, "missing", 7)) {
        msg_add(m, "%s: stage '%s' is %s: --fail-if-slower cannot check it", who, stage, verdict);
        return COMPARE_GATE_FAIL;
    }
    /* A slowdown a disturbance could explain is no evidence of a regression: failing on it
     * would make the gate fail whenever the machine is busy (docs/compare.md#ci-gates). */
    const char *statistical = row->statistical_verdict;
    if (!strcmp(verdict, "unreliable") && statistical && !strcmp(statistical, "slower") &&
        change > g->fail_if_slower_pct) {
        msg_add(m, "note: %s: %s came out %.1f %% slower, but the result is unreliable (%s): "
                "--fail-if-slower not applied; for a clean answer, %s", who, stage, change,
                str_or(row->unreliable_reason, "?"),
                str_or(c->clean_answer, "measure both again on a quiet machine"));
        return COMPARE_GATE_PASS;
    }
    /* A slowdown beyond the threshold, shown by the test, or by an interval wholly beyond it
     * whatever the verdict */
    if ((!strcmp(verdict, "slower") && change > g->fail_if_slower_pct) ||
        (strcmp(verdict, "unreliable") && row->ratio_ci_low > limit)) {
        msg_add(m, "%s: %s is %.1f %% slower than the baseline (%s; p=%.3g, ratio interval "
                "[%.3f, %.3f]), more than the %.1f %% --fail-if-slower allows", who, stage, change,
                row->decided_by ? row->decided_by : "ratio interval", row->p_value,
                row->ratio_ci_low, row->ratio_ci_high, g->fail_if_slower_pct);
        return COMPARE_GATE_FAIL;
    }
    /* Decided; or no slowdown beyond the threshold fits the runs */
    if (!strcmp(verdict, "slower") || !strcmp(verdict, "faster") ||
        !strcmp(verdict, "unreliable") || !strcmp(verdict, "no change") ||
        row->ratio_ci_high <= limit)
        return COMPARE_GATE_PASS;
    /* "too few runs" or "inconclusive": a slowdown beyond the threshold fits the runs, and
     * none is shown */
    const char *prefix = g->allow_undecided ? "note: " : "undecided: ";
    char why[320] = "";
    if (!strcmp(verdict, "too few runs"))
        snprintf(why, sizeof why, " (%lld and %lld runs: 2 a side are needed, 3 or more to "
                 "decide)", row->n_baseline, row->n_candidate);
    else if (isfinite(row->ratio_ci_low) && isfinite(row->ratio_ci_high))
        compatible(row, why, sizeof why);
    msg_add(m, "%s%s: whether %s is more than %.1f %% slower cannot be decided (%s)%s%s", prefix,
            who, stage, g->fail_if_slower_pct, verdict, why,
            g->allow_undecided ? "; --allow-undecided: passed" : "");
    return g->allow_undecided ? COMPARE_GATE_PASS : COMPARE_GATE_UNDECIDED;
}

static int accuracy_gate(const struct doc_cmp_candidate *c, const struct compare_gates *g,
                         struct msgbuf *m)
{
    const char *who = candidate_name(c);
    double b = NAN, a = NAN;
    for (size_t i = 0; i < c->n_counters; i++)
        if (c->counters[i].name && !strcmp(c->counters[i].name, "accuracy")) {
            b = c->counters[i].baseline;
            a = c->counters[i].candidate;
            break;
        }
    if (!isfinite(b) || !isfinite(a)) {
        msg_add(m, "%s: counter 'accuracy' is missing in the %s: --max-accuracy-drop cannot "
                "check it (send it with a C marker event, e.g. mlb_counter(\"accuracy\", x))",
                who, !isfinite(b) ? (!isfinite(a) ? "baseline and candidate" : "baseline")
                                  : "candidate");
        return COMPARE_GATE_FAIL;
    }
    /* Both in 0..1: fractions, shown as percentage points; otherwise both are percentages. */
    double scale = (fabs(b) <= 1 && fabs(a) <= 1) ? 100 : 1;
    double drop = (b - a) * scale;
    if (drop > g->max_accuracy_drop) {
        msg_add(m, "%s: accuracy dropped by %.2f points (%.4g -> %.4g), more than the %.2f "
                "--max-accuracy-drop allows", who, drop, b, a, g->max_accuracy_drop);
        return COMPARE_GATE_FAIL;
    }
    return COMPARE_GATE_PASS;
}

int compare_check_gates(const json_t *doc, const struct compare_gates *gates, char *msg,
                        size_t msglen)
{
    struct msgbuf m = {msg, msglen, 0};
    if (msglen)
        msg[0] = '\0';
    int verdict = COMPARE_GATE_PASS;
    struct doc_comparison *cmp = doc_comparison_read(doc);
    for (size_t i = 0; i < cmp->n_candidates; i++) {
        const struct doc_cmp_candidate *c = &cmp->candidates[i];
        int slower = gates->fail_if_slower_pct >= 0
                         ? slower_gate(c, gates, isfinite(cmp->min_effect_pct)
                                                     ? cmp->min_effect_pct : 0, &m)
                         : COMPARE_GATE_PASS;
        if (slower == COMPARE_GATE_FAIL)
            verdict = COMPARE_GATE_FAIL;
        else if (slower == COMPARE_GATE_UNDECIDED && verdict == COMPARE_GATE_PASS)
            verdict = COMPARE_GATE_UNDECIDED;
        if (gates->max_accuracy_drop >= 0 && accuracy_gate(c, gates, &m) == COMPARE_GATE_FAIL)
            verdict = COMPARE_GATE_FAIL;
    }
    doc_comparison_free(cmp);
    return verdict;
}
