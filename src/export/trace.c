/* trace.c: Chrome Trace Event JSON (--format trace), for Perfetto (ui.perfetto.dev) and
 * chrome://tracing. Each run is laid out after the previous one on one time line, so runs never
 * overlap: run k starts where run k-1 ended plus a gap. Every process of a run becomes a trace
 * process of its own (numbered in order, named "run K: pid P", so a pid reused by the system
 * in a later run stays apart); its threads keep their real tids. Stages are complete events
 * ("ph":"X"), instants "ph":"i", and a process "run K" per run holds the run itself as a
 * complete event and every sampled series as counter events ("ph":"C"; counters `_total`
 * become rates per second). Timestamps are microseconds, with nanoseconds as decimals.
 * --run N writes only run N of each result. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* The mapping of one run's real pids to trace pids. */
struct pidmap {
    long long *real;
    long long *trace;
    size_t n, cap;
};

struct trace {
    FILE *out;
    size_t events;
    long long next_pid;      /* next trace pid to hand out */
    double offset_ns;        /* where the current run starts on the trace's time line */
    struct pidmap pids;
};

/* Writes one event (stolen reference), comma-separated from the previous. */
static void emit(struct trace *tr, json_t *ev)
{
    if (!ev)
        return;
    fputs(tr->events++ ? ",\n" : "\n", tr->out);
    json_dumpf(ev, tr->out, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(ev);
}

static json_t *us(const struct trace *tr, double ns)
{
    return json_real((tr->offset_ns + ns) / 1000.0);
}

static void meta(struct trace *tr, const char *what, long long pid, long long tid,
                 const char *key, json_t *value)
{
    emit(tr, json_pack("{s:s, s:s, s:I, s:I, s:{s:o}}", "name", what, "ph", "M", "pid",
                       (json_int_t)pid, "tid", (json_int_t)tid, "args", key, value));
}

/* The trace pid of real pid in the current run, naming it on first sight. */
static long long trace_pid(struct trace *tr, long long real, int run)
{
    struct pidmap *m = &tr->pids;
    for (size_t i = 0; i < m->n; i++)
        if (m->real[i] == real)
            return m->trace[i];
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->real = xreallocarray(m->real, m->cap, sizeof *m->real);
        m->trace = xreallocarray(m->trace, m->cap, sizeof *m->trace);
    }
    long long pid = tr->next_pid++;
    m->real[m->n] = real;
    m->trace[m->n++] = pid;
    char *name = xasprintf("run %d: pid %lld", run, real);
    meta(tr, "process_name", pid, 0, "name", json_string(name));
    meta(tr, "process_sort_index", pid, 0, "sort_index", json_integer(pid));
    free(name);
    return pid;
}

/* Names each thread once: the main thread, or "tid T". */
static void name_threads(struct trace *tr, const struct doc_run *r, int run)
{
    long long *seen = NULL;
    size_t nseen = 0, nspans = doc_run_n_spans(r), n = nspans + doc_run_n_instants(r);
    for (size_t i = 0; i < n; i++) {
        long long pid, tid;
        if (i < nspans) {
            struct doc_span sp;
            doc_run_span(r, i, &sp);
            pid = sp.pid, tid = sp.tid;
        } else {
            struct doc_instant in;
            doc_run_instant(r, i - nspans, &in);
            pid = in.pid, tid = in.tid;
        }
        bool known = false;
        for (size_t k = 0; k < nseen && !known; k++)
            known = seen[2 * k] == pid && seen[2 * k + 1] == tid;
        if (known)
            continue;
        seen = xreallocarray(seen, 2 * (nseen + 1), sizeof *seen);
        seen[2 * nseen] = pid;
        seen[2 * nseen + 1] = tid;
        nseen++;
        char *name = tid == pid ? xasprintf("main thread (tid %lld)", tid)
                                : xasprintf("tid %lld", tid);
        meta(tr, "thread_name", trace_pid(tr, pid, run), tid, "name", json_string(name));
        free(name);
    }
    free(seen);
}

/* The time the run covers, [*lo, *hi] ns relative to its start: samples may begin before the
 * spawn, spans may end after the exit of the leader. */
static void run_extent(const struct doc_run *run, double *lo, double *hi)
{
    *lo = 0;
    *hi = isfinite(run->wall_ns) ? run->wall_ns : 0;
    for (size_t i = 0; i < doc_run_n_samples(run); i++) {
        double v = doc_run_sample_t(run, i);
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
    for (size_t i = 0; i < doc_run_n_spans(run); i++) {
        struct doc_span sp;
        doc_run_span(run, i, &sp);
        if (sp.start_ns < *lo)
            *lo = sp.start_ns;
        if (sp.end_ns > *hi)
            *hi = sp.end_ns;
    }
}

/* Counter events of every sampled metric: one track per metric, one argument per label set. */
static void counters(struct trace *tr, const struct doc_run *run, long long pid)
{
    size_t ns = doc_run_n_series(run), nt = doc_run_n_samples(run);
    struct doc_series *series = xcalloc(ns ? ns : 1, sizeof *series);
    for (size_t i = 0; i < ns; i++)
        doc_run_series_at(run, i, &series[i]);
    for (size_t i = 0; i < ns; i++) {
        const char *metric = series[i].metric;
        if (!metric)
            continue;
        bool first = true;  /* the first series of this metric draws the whole track */
        for (size_t k = 0; k < i && first; k++)
            first = !(series[k].metric && !strcmp(series[k].metric, metric));
        if (!first)
            continue;
        bool rate = series[i].kind && !strcmp(series[i].kind, "counter");
        char *name = rate ? xasprintf("%s (rate /s)", metric) : xstrdup(metric);
        for (size_t s = rate ? 1 : 0; s < nt; s++) {
            json_t *args = json_object();
            for (size_t k = i; k < ns; k++) {
                const struct doc_series *x = &series[k];
                if (!x->metric || strcmp(x->metric, metric))
                    continue;
                double v = doc_series_value(x, s);
                if (rate) {
                    double prev = doc_series_value(x, s - 1);
                    double dt = doc_run_sample_t(run, s) - doc_run_sample_t(run, s - 1);
                    v = dt > 0 && v >= prev ? (v - prev) / (dt / 1e9) : NAN;
                }
                if (!isfinite(v))
                    continue;
                json_object_set_new(args, x->labels && *x->labels ? x->labels : "value",
                                    json_real(v));
            }
            if (json_object_size(args) == 0) {
                json_decref(args);
                continue;
            }
            /* a rate holds over the interval that ends at sample s: it starts at s - 1 */
            double at = doc_run_sample_t(run, rate ? s - 1 : s);
            emit(tr, json_pack("{s:s, s:s, s:o, s:I, s:I, s:o}", "name", name, "ph", "C", "ts",
                               us(tr, at), "pid", (json_int_t)pid, "tid", (json_int_t)0, "args",
                               args));
        }
        free(name);
    }
    free(series);
}

static void run_events(struct trace *tr, const struct doc_result *result,
                       const struct doc_run *run, int index)
{
    char wall[32];
    const char *status = run->status;
    long long run_pid = tr->next_pid++;
    tr->pids.n = 0;

    char *name = xasprintf("%s: run %d (%s, %s, %s)", doc_result_name(result), index,
                           run->warmup ? "warm-up" : "measured", status ? status : "?",
                           export_fmt_duration(run->wall_ns, wall, sizeof wall));
    meta(tr, "process_name", run_pid, 0, "name", json_string(name));
    meta(tr, "process_sort_index", run_pid, 0, "sort_index", json_integer(run_pid));
    meta(tr, "thread_name", run_pid, 0, "name", json_string("run and resources"));
    free(name);
    json_t *exit_code = isfinite(run->exit_code) && fabs(run->exit_code) < 1e15
                            ? json_integer((json_int_t)run->exit_code) : json_null();
    json_t *args = json_pack("{s:s?, s:o, s:s?, s:b}", "status", status, "exit_code", exit_code,
                             "signal", run->signal, "warmup", run->warmup);
    char *run_name = xasprintf("run %d", index);
    emit(tr, json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:o}", "name", run_name, "cat", "run",
                       "ph", "X", "ts", us(tr, 0), "dur",
                       json_real(isfinite(run->wall_ns) ? run->wall_ns / 1000.0 : 0), "pid",
                       (json_int_t)run_pid, "tid", (json_int_t)0, "args",
                       args ? args : json_object()));
    free(run_name);

    name_threads(tr, run, index);
    for (size_t i = 0; i < doc_run_n_spans(run); i++) {
        struct doc_span sp;
        doc_run_span(run, i, &sp);
        if (!sp.name || !isfinite(sp.start_ns) || !isfinite(sp.end_ns))
            continue;
        emit(tr, json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:{s:I, s:b}}", "name", sp.name,
                           "cat", "stage", "ph", "X", "ts", us(tr, sp.start_ns), "dur",
                           json_real((sp.end_ns - sp.start_ns) / 1000.0), "pid",
                           (json_int_t)trace_pid(tr, sp.pid, index), "tid", (json_int_t)sp.tid,
                           "args", "depth", (json_int_t)sp.depth, "closed", sp.closed));
    }
    for (size_t i = 0; i < doc_run_n_instants(run); i++) {
        struct doc_instant in;
        doc_run_instant(run, i, &in);
        if (!in.name || !isfinite(in.t_ns))
            continue;
        emit(tr, json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I}", "name", in.name, "cat",
                           "instant", "ph", "i", "s", "t", "ts", us(tr, in.t_ns), "pid",
                           (json_int_t)trace_pid(tr, in.pid, index), "tid", (json_int_t)in.tid));
    }
    counters(tr, run, run_pid);
}

static int trace_write(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    int rc = export_check_run(req, err, errlen);
    if (rc != EXPORT_OK)
        return rc;
    struct trace tr = {.out = out, .next_pid = 1};

    /* the gap between runs: 5 % of the longest run, at least 1 ms */
    double longest = 0;
    for (size_t i = 0; i < req->n; i++)
        for (size_t k = 0; k < req->docs[i]->n_runs; k++) {
            double lo, hi;
            run_extent(&req->docs[i]->runs[k], &lo, &hi);
            if (hi - lo > longest)
                longest = hi - lo;
        }
    double gap = longest * 0.05 > 1e6 ? longest * 0.05 : 1e6;

    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"mlbench " MLBENCH_VERSION
          "\",\"layout\":\"runs one after another with a gap; one trace process per run and "
          "per process of a run\",\"results\":", out);
    json_t *ids = json_array();
    for (size_t i = 0; i < req->n; i++)
        json_array_append_new(ids, json_string(req->docs[i]->id));
    json_dumpf(ids, out, JSON_COMPACT);
    json_decref(ids);
    fputs("},\"traceEvents\":[", out);

    double cursor = 0;
    for (size_t i = 0; i < req->n; i++)
        for (size_t k = 0; k < req->docs[i]->n_runs; k++) {
            if (req->run >= 0 && (size_t)req->run != k)
                continue;
            const struct doc_run *run = &req->docs[i]->runs[k];
            double lo, hi;
            run_extent(run, &lo, &hi);
            tr.offset_ns = cursor - lo;
            run_events(&tr, req->docs[i], run, (int)k);
            cursor = tr.offset_ns + hi + gap;
        }
    fputs("\n]}\n", out);
    free(tr.pids.real);
    free(tr.pids.trace);
    return export_finish(out, "the trace", err, errlen);
}

const struct exporter export_trace = {
    .name = "trace",
    .alias = NULL,
    .extension = "json",
    .description = "Chrome Trace Event JSON for Perfetto or chrome://tracing",
    .uses = EXPORT_USES_RUN,
    .write = trace_write,
};
