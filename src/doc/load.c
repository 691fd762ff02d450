/* doc/load.c: the reader of a load result's section (see load.h). */
#include "doc/load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/xalloc.h"

static void read_latency(const json_t *o, struct doc_latency *l)
{
    l->json = json_is_object(o) ? o : NULL;
    l->count = jsonx_int(o, "count", 0);
    l->min = jsonx_num(o, "min");
    l->mean = jsonx_num(o, "mean");
    l->p50 = jsonx_num(o, "p50");
    l->p90 = jsonx_num(o, "p90");
    l->p95 = jsonx_num(o, "p95");
    l->p99 = jsonx_num(o, "p99");
    l->p999 = jsonx_num(o, "p99.9");
    l->max = jsonx_num(o, "max");
}

double doc_latency_at(const struct doc_latency *lat, double p)
{
    char key[48];
    snprintf(key, sizeof key, "p%g", p);
    return jsonx_num(lat->json, key);
}

double doc_load_run_percentile(const struct doc_load_run *run, double p)
{
    double v = doc_latency_at(&run->latency, p);
    if (isfinite(v))
        return v;
    const json_t *h = run->histogram;
    long long total = jsonx_count(h, "total", (long long)1 << 50, 0);
    if (total <= 0)
        return NAN;
    long long rank = (long long)floor((double)total * p / 100) + 1, seen = 0;
    rank = rank > total ? total : rank;
    const json_t *buckets = json_object_get(h, "buckets");
    for (size_t i = 0; i < json_array_size(buckets); i++) {
        const json_t *b = json_array_get(buckets, i);
        double count = jsonx_number(json_array_get(b, 2));
        if (fabs(count) < 1e18) /* not NAN, and a whole count of queries */
            seen += (long long)count;
        if (seen >= rank)
            return fmin(jsonx_number(json_array_get(b, 1)), jsonx_num(h, "max")) * 1e-9;
    }
    return NAN;
}

static void read_spans(const json_t *o, struct doc_load_spans *s)
{
    s->present = o != NULL;
    s->count = jsonx_int(o, "count", 0);
    s->mean_s = jsonx_num(o, "mean_s");
}

static void read_run(const json_t *o, struct doc_load_run *r)
{
    r->json = o;
    r->role = jsonx_str(o, "role");
    r->scenario = jsonx_str(o, "scenario");
    const json_t *met = json_object_get(o, "met_bound");
    r->met_bound = json_is_boolean(met) ? json_is_true(met) : -1;
    r->target_qps = jsonx_num(o, "target_qps");
    r->throughput_qps = jsonx_num(o, "throughput_qps");
    r->percentile = jsonx_num(o, "percentile");
    r->latency_bound_s = jsonx_num(o, "latency_bound_s");
    r->duration_s = jsonx_num(o, "duration_s");
    r->issue_duration_s = jsonx_num(o, "issue_duration_s");
    r->start_offset_s = jsonx_num(o, "start_offset_s");
    r->start_ns = jsonx_num(o, "start_ns");
    r->start_unix_ns = jsonx_num(o, "start_unix_ns");
    r->queries = jsonx_int(o, "queries", 0);
    r->completed = jsonx_int(o, "completed", 0);
    r->failed = jsonx_int(o, "failed", 0);
    r->requests = jsonx_int(o, "requests", 0);
    read_latency(json_object_get(o, "latency_s"), &r->latency);
    read_latency(json_object_get(o, "response_s"), &r->response);
    const json_t *es = json_object_get(o, "early_stopping");
    r->early_estimate_s = jsonx_num(es, "estimate_s");
    r->early_percentile = jsonx_num(es, "percentile");
    r->early_confidence = jsonx_num(es, "confidence");
    r->early_min_queries = jsonx_int(es, "min_queries", 0);
    r->valid = json_is_true(json_object_get(o, "valid"));
    r->invalid_reasons = jsonx_array(o, "invalid_reasons");
    r->errors = jsonx_object(o, "errors");
    r->seconds = jsonx_array(o, "seconds");
    r->histogram = jsonx_object(o, "histogram");
    r->histogram_total = jsonx_int(r->histogram, "total", 0);
    const json_t *c = json_object_get(o, "client");
    r->client.cpu_s = jsonx_num(c, "cpu_s");
    r->client.busiest_thread_ratio = jsonx_num(c, "busiest_thread_ratio");
    read_latency(json_object_get(c, "send_lag_s"), &r->client.send_lag);
    r->client.client_bound = json_is_true(json_object_get(c, "client_bound"));
    r->client.reconnects = jsonx_int(c, "reconnects", 0);
    r->client.bytes_sent = jsonx_int(c, "bytes_sent", 0);
    r->client.bytes_received = jsonx_int(c, "bytes_received", 0);
    const json_t *s = jsonx_object(o, "server");
    r->server.present = s != NULL;
    r->server.cpu_cores = jsonx_num(s, "cpu_cores");
    r->server.resident_bytes_max = jsonx_num(s, "resident_bytes_max");
    r->server.system_cpu_busy_ratio = jsonx_num(s, "system_cpu_busy_ratio");
    r->server.gpu_utilization_ratio = jsonx_num(s, "gpu_utilization_ratio");
    r->server.samples = jsonx_int(s, "samples", 0);
    r->server.stages = jsonx_object(s, "stages");
    r->server.counters = jsonx_object(s, "counters");
    read_spans(jsonx_object(r->server.stages, "queue_wait"), &r->server.queue_wait);
    read_spans(jsonx_object(r->server.stages, "batch"), &r->server.batch);
    read_spans(jsonx_object(r->server.stages, "compute"), &r->server.compute);
    r->server.queue_wait_s = isfinite(r->server.queue_wait.mean_s)
                                 ? r->server.queue_wait.mean_s
                                 : jsonx_num(jsonx_object(r->server.counters, "queue_wait_seconds"), "mean");
    r->server.batch_size = jsonx_num(jsonx_object(r->server.counters, "batch_size"), "mean");
}

struct doc_load *doc_load_read(const json_t *load)
{
    struct doc_load *l = xcalloc(1, sizeof *l);
    l->json = json_is_object(load) ? load : NULL;
    load = l->json;
    l->present = load != NULL;
    l->schema = jsonx_str(load, "schema");
    l->url = jsonx_str(load, "url");
    l->address = jsonx_str(load, "address");
    l->scenario = jsonx_str(load, "scenario");
    l->server_cmd = jsonx_str(load, "server_cmd");
    const json_t *command = jsonx_array(load, "command");
    l->n_command = json_array_size(command);
    l->command = xcalloc(l->n_command ? l->n_command : 1, sizeof *l->command);
    for (size_t i = 0; i < l->n_command; i++)
        l->command[i] = json_string_value(json_array_get(command, i));
    l->connections = jsonx_int(load, "connections", 0);
    l->threads = jsonx_int(load, "threads", 0);
    l->bodies = jsonx_int(load, "bodies", 0);
    l->samples_per_query = jsonx_num(load, "samples_per_query");
    l->seed = jsonx_num(load, "seed");
    l->request_timeout_s = jsonx_num(load, "request_timeout_s");
    l->valid = json_is_true(json_object_get(load, "valid"));
    const json_t *fp = jsonx_object(load, "find_peak");
    l->find_peak = fp != NULL;
    l->peak_qps = jsonx_num(fp, "peak_qps");
    l->peak_latency_bound_s = jsonx_num(fp, "latency_bound_s");
    l->peak_percentile = jsonx_num(fp, "percentile");
    l->peak_probes = jsonx_int(fp, "probes", 0);
    l->peak_confirmations = jsonx_int(fp, "confirmations", 0);
    const json_t *bound = json_object_get(load, "bound");
    l->bound_kind = jsonx_str(bound, "kind");
    l->bound_evidence = jsonx_str(bound, "evidence");
    const json_t *runs = json_object_get(load, "scenarios");
    l->n_runs = json_array_size(runs);
    l->runs = xcalloc(l->n_runs ? l->n_runs : 1, sizeof *l->runs);
    for (size_t i = 0; i < l->n_runs; i++)
        read_run(json_array_get(runs, i), &l->runs[i]);
    /* Which runs count: every run not a probe; with find-peak the last of them only. */
    size_t last = l->n_runs;
    for (size_t i = 0; i < l->n_runs; i++)
        if (!l->runs[i].role || strcmp(l->runs[i].role, "probe"))
            last = i;
    for (size_t i = 0; i < l->n_runs; i++) {
        bool probe = l->runs[i].role && !strcmp(l->runs[i].role, "probe");
        l->runs[i].counts = !probe && (!l->find_peak || i == last);
    }
    return l;
}

struct doc_load *doc_load_read_result(const json_t *result)
{
    return doc_load_read(json_object_get(result, "load"));
}

void doc_load_free(struct doc_load *l)
{
    if (!l)
        return;
    free(l->runs);
    free(l->command);
    free(l);
}

bool doc_load_counts(const struct doc_load *l, size_t i)
{
    return i < l->n_runs && l->runs[i].counts;
}

void doc_load_run_name(const struct doc_load_run *run, char *buf, size_t len)
{
    const char *role = run->role ? run->role : "run";
    const char *scen = run->scenario ? run->scenario : "?";
    if (isfinite(run->target_qps))
        snprintf(buf, len, "%s %s at %.4g QPS", scen, role, run->target_qps);
    else
        snprintf(buf, len, "%s %s", scen, role);
}

size_t doc_load_n_seconds(const struct doc_load_run *run)
{
    return json_array_size(run->seconds);
}

void doc_load_second(const struct doc_load_run *run, size_t i, struct doc_load_second *s)
{
    const json_t *x = json_array_get(run->seconds, i);
    s->t_s = jsonx_num(x, "t_s");
    s->completed = jsonx_num(x, "completed");
    s->failed = jsonx_num(x, "failed");
    s->p50_s = jsonx_num(x, "p50_s");
    s->p90_s = jsonx_num(x, "p90_s");
    s->p99_s = jsonx_num(x, "p99_s");
    s->max_s = jsonx_num(x, "max_s");
}

size_t doc_load_n_buckets(const struct doc_load_run *run)
{
    return json_array_size(json_object_get(run->histogram, "buckets"));
}

void doc_load_bucket(const struct doc_load_run *run, size_t i, struct doc_load_bucket *b)
{
    const json_t *x = json_array_get(json_object_get(run->histogram, "buckets"), i);
    b->low_ns = jsonx_number(json_array_get(x, 0));
    b->high_ns = jsonx_number(json_array_get(x, 1));
    b->count = jsonx_number(json_array_get(x, 2));
}
