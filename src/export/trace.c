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
static void name_threads(struct trace *tr, const json_t *spans, const json_t *instants,
                         int run)
{
    const json_t *lists[2] = {spans, instants};
    long long *seen = NULL;
    size_t nseen = 0;
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < json_array_size(lists[l]); i++) {
            const json_t *e = json_array_get(lists[l], i);
            long long pid = jsonx_int(e, "pid", 0), tid = jsonx_int(e, "tid", 0);
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
    }
    free(seen);
}

/* The time the run covers, [*lo, *hi] ns relative to its start: samples may begin before the
 * spawn, spans may end after the exit of the leader. */
static void run_extent(const json_t *run, double *lo, double *hi)
{
    *lo = 0;
    *hi = jsonx_num(run, "wall_ns");
    if (!isfinite(*hi))
        *hi = 0;
    const json_t *t = json_object_get(json_object_get(run, "samples"), "t_ns");
    for (size_t i = 0; i < json_array_size(t); i++) {
        double v = jsonx_number(json_array_get(t, i));
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
    const json_t *spans = json_object_get(run, "spans");
    for (size_t i = 0; i < json_array_size(spans); i++) {
        const json_t *sp = json_array_get(spans, i);
        double s = jsonx_num(sp, "start_ns"), e = jsonx_num(sp, "end_ns");
        if (s < *lo)
            *lo = s;
        if (e > *hi)
            *hi = e;
    }
}

/* Counter events of every sampled metric: one track per metric, one argument per label set. */
static void counters(struct trace *tr, const json_t *run, long long pid)
{
    const json_t *samples = json_object_get(run, "samples");
    const json_t *t = json_object_get(samples, "t_ns");
    const json_t *series = json_object_get(samples, "series");
    size_t ns = json_array_size(series), nt = json_array_size(t);
    for (size_t i = 0; i < ns; i++) {
        const char *metric = jsonx_str(json_array_get(series, i), "metric");
        if (!metric)
            continue;
        bool first = true;  /* the first series of this metric draws the whole track */
        for (size_t k = 0; k < i && first; k++) {
            const char *m = jsonx_str(json_array_get(series, k), "metric");
            first = !(m && !strcmp(m, metric));
        }
        if (!first)
            continue;
        const char *kind = jsonx_str(json_array_get(series, i), "kind");
        bool rate = kind && !strcmp(kind, "counter");
        char *name = rate ? xasprintf("%s (rate /s)", metric) : xstrdup(metric);
        for (size_t s = rate ? 1 : 0; s < nt; s++) {
            json_t *args = json_object();
            for (size_t k = i; k < ns; k++) {
                const json_t *x = json_array_get(series, k);
                const char *m = jsonx_str(x, "metric");
                if (!m || strcmp(m, metric))
                    continue;
                const json_t *values = json_object_get(x, "values");
                double v = jsonx_number(json_array_get(values, s));
                if (rate) {
                    double prev = jsonx_number(json_array_get(values, s - 1));
                    double dt = jsonx_number(json_array_get(t, s)) -
                                jsonx_number(json_array_get(t, s - 1));
                    v = dt > 0 && v >= prev ? (v - prev) / (dt / 1e9) : NAN;
                }
                if (!isfinite(v))
                    continue;
                const char *labels = jsonx_str(x, "labels");
                json_object_set_new(args, labels && *labels ? labels : "value", json_real(v));
            }
            if (json_object_size(args) == 0) {
                json_decref(args);
                continue;
            }
            /* a rate holds over the interval that ends at sample s: it starts at s - 1 */
            double at = jsonx_number(json_array_get(t, rate ? s - 1 : s));
            emit(tr, json_pack("{s:s, s:s, s:o, s:I, s:I, s:o}", "name", name, "ph", "C", "ts",
                               us(tr, at), "pid", (json_int_t)pid, "tid", (json_int_t)0, "args",
                               args));
        }
        free(name);
    }
}

static void run_events(struct trace *tr, const json_t *result, const json_t *run, int index)
{
    char wall[32];
    const char *status = jsonx_str(run, "status");
    bool warmup = json_is_true(json_object_get(run, "warmup"));
    long long run_pid = tr->next_pid++;
    tr->pids.n = 0;

    char *name = xasprintf("%s: run %d (%s, %s, %s)", export_result_name(result), index,
                           warmup ? "warm-up" : "measured", status ? status : "?",
                           export_fmt_duration(jsonx_num(run, "wall_ns"), wall, sizeof wall));
    meta(tr, "process_name", run_pid, 0, "name", json_string(name));
    meta(tr, "process_sort_index", run_pid, 0, "sort_index", json_integer(run_pid));
    meta(tr, "thread_name", run_pid, 0, "name", json_string("run and resources"));
    free(name);
    double wall_ns = jsonx_num(run, "wall_ns");
    json_t *args = json_pack("{s:s?, s:O?, s:s?, s:b}", "status", status, "exit_code",
                             json_object_get(run, "exit_code"), "signal",
                             jsonx_str(run, "signal"), "warmup", warmup);
    char *run_name = xasprintf("run %d", index);
    emit(tr, json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:o}", "name", run_name, "cat", "run",
                       "ph", "X", "ts", us(tr, 0), "dur",
                       json_real(isfinite(wall_ns) ? wall_ns / 1000.0 : 0), "pid",
                       (json_int_t)run_pid, "tid", (json_int_t)0, "args",
                       args ? args : json_object()));
    free(run_name);

    const json_t *spans = json_object_get(run, "spans");
    const json_t *instants = json_object_get(run, "instants");
    name_threads(tr, spans, instants, index);
    for (size_t i = 0; i < json_array_size(spans); i++) {
        const json_t *sp = json_array_get(spans, i);
        double s = jsonx_num(sp, "start_ns"), e = jsonx_num(sp, "end_ns");
        const char *stage = jsonx_str(sp, "name");
        if (!stage || !isfinite(s) || !isfinite(e))
            continue;
        emit(tr, json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:{s:I, s:b}}", "name", stage,
                           "cat", "stage", "ph", "X", "ts", us(tr, s), "dur",
                           json_real((e - s) / 1000.0), "pid",
                           (json_int_t)trace_pid(tr, jsonx_int(sp, "pid", 0), index), "tid",
                           (json_int_t)jsonx_int(sp, "tid", 0), "args", "depth",
                           (json_int_t)jsonx_int(sp, "depth", 0), "closed",
                           !json_is_false(json_object_get(sp, "closed"))));
    }
    for (size_t i = 0; i < json_array_size(instants); i++) {
        const json_t *in = json_array_get(instants, i);
        const char *iname = jsonx_str(in, "name");
        double t = jsonx_num(in, "t_ns");
        if (!iname || !isfinite(t))
            continue;
        emit(tr, json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I}", "name", iname, "cat", "instant",
                           "ph", "i", "s", "t", "ts", us(tr, t), "pid",
                           (json_int_t)trace_pid(tr, jsonx_int(in, "pid", 0), index), "tid",
                           (json_int_t)jsonx_int(in, "tid", 0)));
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
    for (size_t i = 0; i < req->n; i++) {
        const json_t *runs = json_object_get(req->results[i], "runs");
        for (size_t k = 0; k < json_array_size(runs); k++) {
            double lo, hi;
            run_extent(json_array_get(runs, k), &lo, &hi);
            if (hi - lo > longest)
                longest = hi - lo;
        }
    }
    double gap = longest * 0.05 > 1e6 ? longest * 0.05 : 1e6;

    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"mlbench " MLBENCH_VERSION
          "\",\"layout\":\"runs one after another with a gap; one trace process per run and "
          "per process of a run\",\"results\":", out);
    json_t *ids = json_array();
    for (size_t i = 0; i < req->n; i++)
        json_array_append_new(ids, json_string(jsonx_str(req->results[i], "id")));
    json_dumpf(ids, out, JSON_COMPACT);
    json_decref(ids);
    fputs("},\"traceEvents\":[", out);

    double cursor = 0;
    for (size_t i = 0; i < req->n; i++) {
        const json_t *runs = json_object_get(req->results[i], "runs");
        for (size_t k = 0; k < json_array_size(runs); k++) {
            if (req->run >= 0 && (size_t)req->run != k)
                continue;
            const json_t *run = json_array_get(runs, k);
            double lo, hi;
            run_extent(run, &lo, &hi);
            tr.offset_ns = cursor - lo;
            run_events(&tr, req->results[i], run, (int)k);
            cursor = tr.offset_ns + hi + gap;
        }
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
