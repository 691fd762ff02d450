/* load_runs: the runs of a `mlbench load` job and the result's "load" section built from them
 * (load_runs.h). */
#include "session/load_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/units.h"
#include "util/xalloc.h"


struct load_entry *load_runs_add(struct load_runs *r, const char *role, const struct load_rules *rules)
{
    r->v = xgrow(r->v, &r->cap, r->n + 1, sizeof *r->v);
    struct load_entry *e = &r->v[r->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->role, sizeof e->role, "%s", role);
    e->rules = *rules;
    return e;
}

void load_runs_free(struct load_runs *r)
{
    for (size_t i = 0; i < r->n; i++)
        load_run_free(&r->v[i].run);
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* The run that counts: the plain run, or the last confirmation; NULL when none. */
static const struct load_entry *final_entry(const struct load_runs *r)
{
    for (size_t i = r->n; i-- > 0;)
        if (strcmp(r->v[i].role, "probe") != 0)
            return &r->v[i];
    return NULL;
}

bool load_runs_valid(const struct load_runs *r)
{
    const struct load_entry *e = final_entry(r);
    return e && e->verdict.valid && (!r->peak_searched || r->peak_qps > 0);
}

bool load_entry_met(const struct load_entry *e)
{
    return e->run.failed == 0 && e->run.completed > 0 &&
           e->verdict.percentile_ns <= e->rules.latency_bound_ns;
}

/* A string from outside (the URL, the command): made valid UTF-8. */
static json_t *text_json(const char *s)
{
    char *clean = units_utf8_sanitize(s, strlen(s));
    json_t *j = json_string(clean);
    free(clean);
    return j;
}

/* ---- the server during a run ---- */

static long find_series(const struct sample_table *t, const char *name)
{
    for (size_t i = 0; i < t->n_series; i++)
        if (strcmp(t->defs[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* The rows of t inside [from, to] (CLOCK_MONOTONIC): *lo .. *hi inclusive; false when none. */
static bool window(const struct sample_table *t, int64_t from, int64_t to, size_t *lo, size_t *hi)
{
    size_t i = 0;
    while (i < t->n && t->t_ns[i] < from)
        i++;
    size_t j = i;
    while (j < t->n && t->t_ns[j] <= to)
        j++;
    if (j == i)
        return false;
    *lo = i;
    *hi = j - 1;
    return true;
}

/* Sets o[key] to v, or null when v is not finite; returns what a reader gets back (v or NAN). */
static double set_number(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
    return isfinite(v) ? v : NAN;
}

/* The rate of a counter series over the window, the mean or the largest of a gauge. */
static double series_rate(const struct sample_table *t, long s, size_t lo, size_t hi)
{
    if (s < 0 || hi <= lo || t->t_ns[hi] <= t->t_ns[lo] || !isfinite(t->v[s][hi]) || !isfinite(t->v[s][lo]))
        return NAN;
    return (t->v[s][hi] - t->v[s][lo]) / ((double)(t->t_ns[hi] - t->t_ns[lo]) * 1e-9);
}

static double series_mean(const struct sample_table *t, long s, size_t lo, size_t hi, bool max)
{
    if (s < 0)
        return NAN;
    double sum = 0, best = -INFINITY;
    size_t n = 0;
    for (size_t i = lo; i <= hi; i++)
        if (isfinite(t->v[s][i])) {
            sum += t->v[s][i];
            best = fmax(best, t->v[s][i]);
            n++;
        }
    return n ? (max ? best : sum / (double)n) : NAN;
}

/* Mean duration (s) and count of the server's spans named name inside the window (relative to
 * the repetition's start). */
static void spans_in(const struct repetition *rep, const char *name, int64_t from, int64_t to,
                     double *mean_s, uint64_t *count)
{
    double sum = 0;
    *count = 0;
    for (size_t i = 0; i < rep->stages.n_spans; i++) {
        const struct span *sp = &rep->stages.spans[i];
        if (sp->start_ns < from || sp->start_ns > to ||
            strcmp(event_log_str(&rep->log, sp->name), name) != 0)
            continue;
        sum += (double)(sp->end_ns - sp->start_ns) * 1e-9;
        (*count)++;
    }
    *mean_s = *count ? sum / (double)*count : NAN;
}

/* What the bound verdict weighs of the server during a run, as the section holds it: NAN where
 * it was not measured (null or absent in the section). */
struct server_figures {
    double cpu_cores, gpu_busy;
    double queue_wait_s;  /* the queue_wait spans' mean, else the queue_wait_seconds counter's
                           * (the reference server's, one per batch) */
    double compute_s;     /* the compute spans' mean */
};

static const struct server_figures unmeasured = {NAN, NAN, NAN, NAN};

/* The server during run: its resources, its marker spans and counters inside the run's window
 * (as JSON, returned), and in *f what the bound verdict weighs of them. */
static json_t *server_json(const struct repetition *rep, const struct load_run *run,
                           struct server_figures *f)
{
    json_t *o = json_object();
    *f = unmeasured;
    const struct sample_table *t = &rep->samples;
    size_t lo, hi;
    if (t->n && window(t, run->start_ns, run->end_ns, &lo, &hi)) {
        f->cpu_cores = set_number(o, "cpu_cores", series_rate(t, find_series(t, "process_cpu_seconds_total"), lo, hi));
        set_number(o, "resident_bytes_max", series_mean(t, find_series(t, "process_resident_bytes"), lo, hi, true));
        set_number(o, "system_cpu_busy_ratio", series_mean(t, find_series(t, "system_cpu_busy_ratio"), lo, hi, false));
        f->gpu_busy = set_number(o, "gpu_utilization_ratio", series_mean(t, find_series(t, "gpu_utilization_ratio"), lo, hi, false));
        json_object_set_new(o, "samples", json_integer((json_int_t)(hi - lo + 1)));
    }
    int64_t from = run->start_ns - rep->outcome.start_ns, to = run->end_ns - rep->outcome.start_ns;
    json_t *st = json_object();
    static const char *const names[] = {"queue_wait", "batch", "compute"};
    double *kept[] = {&f->queue_wait_s, NULL, &f->compute_s};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        double mean;
        uint64_t n;
        spans_in(rep, names[i], from, to, &mean, &n);
        if (n) {
            json_t *x = json_object();
            json_object_set_new(x, "count", json_integer((json_int_t)n));
            double m = set_number(x, "mean_s", mean);
            if (kept[i])
                *kept[i] = m;
            json_object_set_new(st, names[i], x);
        }
    }
    json_object_set_new(o, "stages", st);
    /* Every counter's mean over the samples the repetition kept inside the window (an even
     * subsample when it sent more than STAGES_MAX_COUNTER_POINTS): the reference server sends
     * batch_size, requests and queue_wait_seconds per batch. */
    json_t *cs = json_object();
    double queue_counter = NAN;
    for (size_t c = 0; c < rep->stages.n_counters; c++) {
        const struct counter_total *ct = &rep->stages.counters[c];
        double sum = 0;
        uint64_t n = 0;
        for (size_t k = 0; k < ct->n_points; k++)
            if (ct->points[k].t_ns >= from && ct->points[k].t_ns <= to) {
                sum += ct->points[k].value;
                n++;
            }
        if (!n)
            continue;
        json_t *x = json_object();
        json_object_set_new(x, "samples", json_integer((json_int_t)n));
        double mean = set_number(x, "mean", sum / (double)n);
        const char *name = event_log_str(&rep->log, ct->name);
        if (strcmp(name, "queue_wait_seconds") == 0)
            queue_counter = mean;
        json_object_set_new(cs, name, x);
    }
    json_object_set_new(o, "counters", cs);
    if (!isfinite(f->queue_wait_s))
        f->queue_wait_s = queue_counter;
    return o;
}

/* What bounds the server in the run that counts: the evidence in words. */
static json_t *bound_json(const struct load_entry *e, const struct server_figures *server)
{
    const char *kind = "unknown";
    char why[400] = "not enough evidence: give --server-cmd so that mlbench samples the server";
    const struct load_run *r = &e->run;
    double cores = server->cpu_cores, gpu = server->gpu_busy;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double queue = server->queue_wait_s, compute = server->compute_s;
    double p50 = (double)hist_percentile(&r->latency, 50) * 1e-9;
    if (r->failed) {
        kind = "errors";
        snprintf(why, sizeof why, "%llu of %llu queries failed: the latency figures describe the rest",
                 (unsigned long long)r->failed, (unsigned long long)r->issued);
    } else if (e->verdict.client_bound) {
        kind = "client-bound";
        snprintf(why, sizeof why, "the generator was late or saturated: the server was not the limit");
    } else if (isfinite(gpu) && gpu >= 0.9) {
        kind = "compute-bound";
        snprintf(why, sizeof why, "the GPU was busy %.0f%% of the time", gpu * 100);
    } else if (isfinite(cores) && ncpu > 0 && cores >= 0.85 * (double)ncpu) {
        kind = "compute-bound";
        snprintf(why, sizeof why, "the server used %.2f of the %ld CPU cores", cores, ncpu);
    } else if (isfinite(queue) && isfinite(compute) && queue > compute && queue > 0.25 * p50) {
        /* more than a quarter of the latency, and more than the work: the batcher's wait */
        kind = "queueing";
        snprintf(why, sizeof why, "requests waited %.3g ms on average before their batch ran, "
                 "longer than the %.3g ms a batch computed (p50 latency %.3g ms): a shorter queue "
                 "delay or more compute threads", queue * 1e3, compute * 1e3, p50 * 1e3);
    } else if (isfinite(cores)) {
        kind = "latency";
        snprintf(why, sizeof why, "neither the CPU (%.2f of %ld cores) nor a queue was saturated: "
                 "the latency is the server's own work per request", cores, ncpu);
    }
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "evidence", json_string(why));
    return o;
}

json_t *load_runs_section(const struct load_runs *r, const struct load_config *cfg,
                          const char *address, const char *url, const char *server_cmd,
                          const struct repetition *rep)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("mlbench.load/1"));
    json_object_set_new(o, "url", text_json(url));
    json_object_set_new(o, "address", text_json(address));
    json_object_set_new(o, "scenario", json_string(load_scenario_name(cfg->scenario)));
    json_object_set_new(o, "server_cmd", server_cmd ? text_json(server_cmd) : json_null());
    json_object_set_new(o, "connections", json_integer(cfg->connections));
    json_object_set_new(o, "threads", json_integer(cfg->threads));
    json_object_set_new(o, "samples_per_query",
                        cfg->scenario == LOAD_MULTI_STREAM ? json_integer(cfg->samples_per_query) : json_null());
    json_object_set_new(o, "seed", cfg->scenario == LOAD_SERVER ? json_integer((json_int_t)cfg->seed) : json_null());
    json_object_set_new(o, "request_timeout_s", json_real(cfg->request_timeout_s));
    json_object_set_new(o, "bodies", json_integer((json_int_t)cfg->n_requests));
    json_t *runs = json_array();
    struct server_figures last_server = unmeasured, figures;
    for (size_t i = 0; i < r->n; i++) {
        const struct load_entry *e = &r->v[i];
        json_t *x = load_run_to_json(&e->run, &e->rules, &e->verdict);
        json_object_set_new(x, "role", json_string(e->role));
        if (r->peak_searched || strcmp(e->role, "run") != 0)
            json_object_set_new(x, "met_bound", json_boolean(load_entry_met(e)));
        if (rep) {
            json_object_set_new(x, "start_offset_s", json_real((double)(e->run.start_ns - rep->outcome.start_ns) * 1e-9));
            json_object_set_new(x, "server", server_json(rep, &e->run, &figures));
            if (e == final_entry(r))
                last_server = figures;
        }
        json_array_append_new(runs, x);
    }
    json_object_set_new(o, "scenarios", runs);
    if (r->peak_searched) {
        json_t *p = json_object();
        json_object_set_new(p, "peak_qps", r->peak_qps > 0 ? json_real(r->peak_qps) : json_null());
        json_object_set_new(p, "latency_bound_s", r->n ? json_real((double)r->v[0].rules.latency_bound_ns * 1e-9) : json_null());
        json_object_set_new(p, "percentile", r->n ? json_real(r->v[0].rules.percentile) : json_null());
        size_t probes = 0, confirms = 0;
        for (size_t i = 0; i < r->n; i++) {
            probes += strcmp(r->v[i].role, "probe") == 0;
            confirms += strcmp(r->v[i].role, "confirm") == 0;
        }
        json_object_set_new(p, "probes", json_integer((json_int_t)probes));
        json_object_set_new(p, "confirmations", json_integer((json_int_t)confirms));
        json_object_set_new(o, "find_peak", p);
    }
    const struct load_entry *fin = final_entry(r);
    json_object_set_new(o, "valid", json_boolean(load_runs_valid(r)));
    json_object_set_new(o, "bound", fin ? bound_json(fin, &last_server) : json_null());
    return o;
}
