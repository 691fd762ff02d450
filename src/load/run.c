/* run: a scenario run's figures: the merge of the generator threads' parts, its derived
 * figures, the scenarios' names (load.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "util/xalloc.h"

static void merge_errors(struct load_errors *d, const struct load_errors *s)
{
    for (int i = 0; i < LOAD_STATUS_CODES; i++)
        d->status[i] += s->status[i];
    d->timeout += s->timeout;
    d->reset += s->reset;
    d->connect += s->connect;
    d->protocol += s->protocol;
}

static void merge_seconds(struct load_run *run, const struct load_run *s, int64_t offset_ns)
{
    size_t shift = offset_ns > 0 ? (size_t)(offset_ns / 1000000000LL) : 0;
    size_t need = s->n_seconds + shift;
    if (need > run->n_seconds) {
        run->seconds = xreallocarray(run->seconds, need, sizeof *run->seconds);
        memset(run->seconds + run->n_seconds, 0, (need - run->n_seconds) * sizeof *run->seconds);
        run->n_seconds = need;
    }
    for (size_t i = 0; i < s->n_seconds; i++) {
        struct load_second *d = &run->seconds[i + shift];
        const struct load_second *x = &s->seconds[i];
        uint64_t n = d->completed + x->completed;
        if (n) { /* count-weighted: exact with one thread */
            double a = (double)d->completed / (double)n, b = (double)x->completed / (double)n;
            d->p50_ns = (int64_t)llround(a * (double)d->p50_ns + b * (double)x->p50_ns);
            d->p90_ns = (int64_t)llround(a * (double)d->p90_ns + b * (double)x->p90_ns);
            d->p99_ns = (int64_t)llround(a * (double)d->p99_ns + b * (double)x->p99_ns);
        }
        if (x->max_ns > d->max_ns)
            d->max_ns = x->max_ns;
        d->completed = n;
        d->failed += x->failed;
    }
}

void load_run_merge(struct load_run *run, const struct load_run *s)
{
    if (s->issue_end_ns > run->issue_end_ns)
        run->issue_end_ns = s->issue_end_ns;
    if (s->end_ns > run->end_ns)
        run->end_ns = s->end_ns;
    run->issued += s->issued;
    run->completed += s->completed;
    run->failed += s->failed;
    run->requests += s->requests;
    merge_errors(&run->errors, &s->errors);
    hist_merge(&run->latency, &s->latency);
    hist_merge(&run->response, &s->response);
    hist_merge(&run->send_lag, &s->send_lag);
    merge_seconds(run, s, s->start_ns - run->start_ns);
    run->client_cpu_s += s->client_cpu_s;
    run->reconnects += s->reconnects;
    run->bytes_sent += s->bytes_sent;
    run->bytes_received += s->bytes_received;
    run->interrupted |= s->interrupted;
}

void load_run_free(struct load_run *run)
{
    free(run->seconds);
    run->seconds = NULL;
    run->n_seconds = 0;
}

double load_run_duration_s(const struct load_run *run)
{
    return run->end_ns > run->start_ns ? (double)(run->end_ns - run->start_ns) * 1e-9 : 0;
}

double load_run_throughput(const struct load_run *run)
{
    double d = load_run_duration_s(run);
    return d > 0 ? (double)run->completed / d : 0;
}

uint64_t load_errors_total(const struct load_errors *e)
{
    uint64_t n = e->timeout + e->reset + e->connect + e->protocol;
    for (int i = 0; i < LOAD_STATUS_CODES; i++)
        n += e->status[i];
    return n;
}

const char *load_scenario_name(enum load_scenario s)
{
    switch (s) {
    case LOAD_SINGLE_STREAM: return "single-stream";
    case LOAD_MULTI_STREAM: return "multi-stream";
    case LOAD_SERVER: return "server";
    case LOAD_OFFLINE: return "offline";
    }
    return "?";
}

int load_scenario_parse(const char *name)
{
    static const enum load_scenario all[] = {LOAD_SINGLE_STREAM, LOAD_MULTI_STREAM, LOAD_SERVER,
                                             LOAD_OFFLINE};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, load_scenario_name(all[i])) == 0)
            return (int)all[i];
    return -1;
}
