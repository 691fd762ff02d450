/* judge: the validity rules and the JSON form of one scenario run (judge.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "load/earlystop.h"
#include "load/judge.h"
#include "util/units.h"

static void reason(struct load_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(struct load_verdict *v, const char *fmt, ...)
{
    v->valid = false;
    if (v->n_reasons == LOAD_MAX_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reasons[v->n_reasons++], sizeof v->reasons[0], fmt, ap);
    va_end(ap);
}

void load_judge(const struct load_rules *rules, const struct load_run *run, struct load_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->valid = true;
    char a[32], b[32];
    double dur = load_run_duration_s(run);
    double issuing = run->issue_end_ns > run->start_ns ? (double)(run->issue_end_ns - run->start_ns) * 1e-9 : 0;
    if (run->interrupted)
        reason(v, "interrupted before the minimum duration and query count were reached");
    if (issuing + 1e-3 < rules->min_duration_s)
        reason(v, "too short: queries were issued for %s, the minimum is %s",
               units_duration(issuing * 1e9, a, sizeof a), units_duration(rules->min_duration_s * 1e9, b, sizeof b));
    if (run->issued < rules->min_queries)
        reason(v, "too few queries: %llu issued, the minimum is %llu", (unsigned long long)run->issued,
               (unsigned long long)rules->min_queries);
    if (run->failed)
        reason(v, "%llu of %llu queries failed (errors by kind in the result)",
               (unsigned long long)run->failed, (unsigned long long)run->issued);
    (void)dur;

    v->percentile_ns = hist_percentile(&run->latency, rules->percentile);
    v->early_min_queries = earlystop_min_queries(rules->percentile, rules->confidence);
    v->early_known = earlystop_estimate(&run->latency, rules->percentile, rules->confidence, &v->early_ns);
    if (run->scenario != LOAD_OFFLINE && rules->latency_bound_ns > 0) {
        units_duration((double)rules->latency_bound_ns, b, sizeof b);
        if (v->percentile_ns > rules->latency_bound_ns)
            reason(v, "latency bound missed: p%g is %s, the bound %s", rules->percentile,
                   units_duration((double)v->percentile_ns, a, sizeof a), b);
        else if (!v->early_known)
            reason(v, "too few queries for the early-stopping estimate of p%g: %llu, it needs %llu",
                   rules->percentile, (unsigned long long)run->completed,
                   (unsigned long long)v->early_min_queries);
        else if (v->early_ns > rules->latency_bound_ns)
            reason(v, "early-stopping estimate of p%g is %s, above the bound %s", rules->percentile,
                   units_duration((double)v->early_ns, a, sizeof a), b);
    }
    /* Late sends are inside the latencies (they count from the due times) and overstate them
     * by at most the lag: a lag that is a small share of the metric changes nothing. */
    int64_t lag99 = hist_percentile(&run->send_lag, 99);
    if (lag99 > LOAD_LAG_LIMIT_NS && (double)lag99 > LOAD_LAG_SHARE * (double)v->percentile_ns) {
        v->client_bound = true;
        units_duration((double)lag99, a, sizeof a);
        /* Late but mostly idle: its thread was waiting for a core, not working. */
        if (run->client_busiest_ratio < 0.5)
            reason(v, "client-bound: the generator sent its requests late (p99 lag %s > 1 ms) "
                   "while busy %.0f%% of the time: it was not running when they were due "
                   "(waiting for a CPU, or on a virtual machine the host running another "
                   "machine): run the server on other cores (taskset) or another machine, on "
                   "a dedicated host", a, run->client_busiest_ratio * 100);
        else
            reason(v, "client-bound: the generator sent its requests late (p99 lag %s > 1 ms): "
                   "use --threads, fewer connections, or a less busy machine", a);
    } else if (run->client_busiest_ratio > LOAD_BUSY_LIMIT) {
        v->client_bound = true;
        reason(v, "client-bound: a generator thread was busy %.0f%% of the time: use --threads "
               "or a less busy machine", run->client_busiest_ratio * 100);
    }
}

static json_t *seconds_or_null(int64_t ns, bool known)
{
    return known ? json_real((double)ns * 1e-9) : json_null();
}

static json_t *latency_json(const struct hist *h)
{
    json_t *o = json_object();
    bool any = h->total > 0;
    static const struct { const char *key; double p; } ps[] = {
        {"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99.9", 99.9}};
    json_object_set_new(o, "count", json_integer((json_int_t)h->total));
    json_object_set_new(o, "min", seconds_or_null(h->min_ns, any));
    json_object_set_new(o, "mean", any ? json_real(hist_mean(h) * 1e-9) : json_null());
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        json_object_set_new(o, ps[i].key, seconds_or_null(hist_percentile(h, ps[i].p), any));
    json_object_set_new(o, "max", seconds_or_null(h->max_ns, any));
    return o;
}

static json_t *errors_json(const struct load_errors *e)
{
    json_t *o = json_object();
    for (int i = 0; i < LOAD_STATUS_CODES; i++)
        if (e->status[i]) {
            char key[16];
            snprintf(key, sizeof key, "http_%d", i);
            json_object_set_new(o, key, json_integer((json_int_t)e->status[i]));
        }
    static const char *const names[] = {"timeout", "reset", "connect", "protocol"};
    const uint64_t vals[] = {e->timeout, e->reset, e->connect, e->protocol};
    for (size_t i = 0; i < 4; i++)
        if (vals[i])
            json_object_set_new(o, names[i], json_integer((json_int_t)vals[i]));
    return o;
}

json_t *load_run_to_json(const struct load_run *run, const struct load_rules *rules,
                         const struct load_verdict *v)
{
    json_t *o = json_object();
    json_object_set_new(o, "scenario", json_string(load_scenario_name(run->scenario)));
    json_object_set_new(o, "target_qps", run->scenario == LOAD_SERVER ? json_real(run->target_qps) : json_null());
    json_object_set_new(o, "start_unix_ns", json_integer((json_int_t)run->start_unix_ns));
    json_object_set_new(o, "start_ns", json_integer((json_int_t)run->start_ns));
    json_object_set_new(o, "duration_s", json_real(load_run_duration_s(run)));
    json_object_set_new(o, "issue_duration_s",
                        json_real(run->issue_end_ns > run->start_ns ? (double)(run->issue_end_ns - run->start_ns) * 1e-9 : 0));
    json_object_set_new(o, "queries", json_integer((json_int_t)run->issued));
    json_object_set_new(o, "completed", json_integer((json_int_t)run->completed));
    json_object_set_new(o, "failed", json_integer((json_int_t)run->failed));
    json_object_set_new(o, "requests", json_integer((json_int_t)run->requests));
    json_object_set_new(o, "throughput_qps", json_real(load_run_throughput(run)));
    json_object_set_new(o, "percentile", json_real(rules->percentile));
    json_object_set_new(o, "latency_bound_s",
                        rules->latency_bound_ns > 0 ? json_real((double)rules->latency_bound_ns * 1e-9) : json_null());
    json_object_set_new(o, "latency_s", latency_json(&run->latency));
    json_object_set_new(o, "response_s", latency_json(&run->response));
    json_t *es = json_object();
    json_object_set_new(es, "percentile", json_real(rules->percentile));
    json_object_set_new(es, "confidence", json_real(rules->confidence));
    json_object_set_new(es, "estimate_s", seconds_or_null(v->early_ns, v->early_known));
    json_object_set_new(es, "min_queries", json_integer((json_int_t)v->early_min_queries));
    json_object_set_new(o, "early_stopping", es);
    json_object_set_new(o, "errors", errors_json(&run->errors));
    json_object_set_new(o, "valid", json_boolean(v->valid));
    json_t *rs = json_array();
    for (size_t i = 0; i < v->n_reasons; i++)
        json_array_append_new(rs, json_string(v->reasons[i]));
    json_object_set_new(o, "invalid_reasons", rs);
    json_t *cl = json_object();
    json_object_set_new(cl, "cpu_s", json_real(run->client_cpu_s));
    json_object_set_new(cl, "busiest_thread_ratio", json_real(run->client_busiest_ratio));
    json_object_set_new(cl, "send_lag_s", latency_json(&run->send_lag));
    json_object_set_new(cl, "client_bound", json_boolean(v->client_bound));
    json_object_set_new(cl, "reconnects", json_integer((json_int_t)run->reconnects));
    json_object_set_new(cl, "bytes_sent", json_integer((json_int_t)run->bytes_sent));
    json_object_set_new(cl, "bytes_received", json_integer((json_int_t)run->bytes_received));
    json_object_set_new(o, "client", cl);
    json_t *secs = json_array();
    for (size_t i = 0; i < run->n_seconds; i++) {
        const struct load_second *s = &run->seconds[i];
        json_t *x = json_object();
        bool any = s->completed > 0;
        json_object_set_new(x, "t_s", json_integer((json_int_t)i));
        json_object_set_new(x, "completed", json_integer((json_int_t)s->completed));
        json_object_set_new(x, "failed", json_integer((json_int_t)s->failed));
        json_object_set_new(x, "p50_s", seconds_or_null(s->p50_ns, any));
        json_object_set_new(x, "p90_s", seconds_or_null(s->p90_ns, any));
        json_object_set_new(x, "p99_s", seconds_or_null(s->p99_ns, any));
        json_object_set_new(x, "max_s", seconds_or_null(s->max_ns, any));
        json_array_append_new(secs, x);
    }
    json_object_set_new(o, "seconds", secs);
    json_object_set_new(o, "histogram", hist_to_json(&run->latency));
    return o;
}
