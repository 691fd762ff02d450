/* fuzz_markers: the marker datagram parser, the event log and the stage aggregation.
 * Input: datagrams separated by '\n', optionally after a first line "@T0 WALL" giving the run
 * window (start in CLOCK_MONOTONIC ns, length in ns; default 1 s and 10 s). Every datagram is
 * parsed (marker_parse), logged (event_log_add / _add_malformed), then the log is aggregated
 * (stages_aggregate) and the documented invariants are checked: no negative duration, no span
 * outside the run window. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/event_log.h"
#include "measure/marker_parse.h"
#include "measure/stages.h"

#define FAIL(...)                                                                             \
    do {                                                                                      \
        fprintf(stderr, "fuzz_markers: " __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                                  \
        abort();                                                                              \
    } while (0)

static void check(const struct stage_data *d, int64_t wall_ns)
{
    for (size_t i = 0; i < d->n_spans; i++) {
        const struct span *s = &d->spans[i];
        if (s->start_ns < 0 || s->end_ns < s->start_ns || s->end_ns > wall_ns)
            FAIL("span %zu: [%" PRId64 ", %" PRId64 "] outside [0, %" PRId64 "] or negative", i,
                 s->start_ns, s->end_ns, wall_ns);
    }
    for (size_t i = 0; i < d->n_stages; i++) {
        const struct stage_total *t = &d->stages[i];
        if (t->busy_ns < 0 || t->active_ns < 0 || t->overlap_ns < 0 || t->first_ns < 0 ||
            t->last_ns < t->first_ns || t->active_ns > wall_ns || t->overlap_ns > t->active_ns ||
            t->unclosed > t->count)
            FAIL("stage %zu: busy %" PRId64 " active %" PRId64 " overlap %" PRId64
                 " first %" PRId64 " last %" PRId64 " (wall %" PRId64 ")",
                 i, t->busy_ns, t->active_ns, t->overlap_ns, t->first_ns, t->last_ns, wall_ns);
    }
    if (d->outside_ns < -1 || d->outside_ns > wall_ns)
        FAIL("outside_ns %" PRId64 " (wall %" PRId64 ")", d->outside_ns, wall_ns);
    if (d->n_spans == 0 && d->outside_ns != -1)
        FAIL("outside_ns %" PRId64 " without spans", d->outside_ns);
    /* ranks: ascending and distinct, bounded; each rank's stage within the run and its stage */
    if (d->n_ranks > STAGES_MAX_RANKS)
        FAIL("%zu ranks", d->n_ranks);
    for (size_t i = 1; i < d->n_ranks; i++)
        if (d->ranks[i] <= d->ranks[i - 1] || d->ranks[i - 1] < 0)
            FAIL("ranks out of order at %zu", i);
    for (size_t i = 0; i < d->n_rank_stages; i++) {
        const struct rank_stage *r = &d->rank_stages[i];
        if (r->name == 0 || r->name > d->n_stages || r->active_ns < 0 || r->active_ns > wall_ns ||
            r->busy_ns < r->active_ns || r->count == 0 ||
            r->active_ns > d->stages[r->name - 1].active_ns ||
            (i > 0 && (r->rank < d->rank_stages[i - 1].rank ||
                       (r->rank == d->rank_stages[i - 1].rank &&
                        r->name <= d->rank_stages[i - 1].name))))
            FAIL("rank stage %zu: rank %d stage %u active %" PRId64 " busy %" PRId64, i,
                 (int)r->rank, r->name, r->active_ns, r->busy_ns);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    int64_t t0_ns = 1000000000, wall_ns = 10000000000;
    if (size > 0 && p[0] == '@') {
        const char *nl = memchr(p, '\n', size);
        char head[64] = "";
        size_t n = nl ? (size_t)(nl - p) : size;
        memcpy(head, p + 1, n - 1 < sizeof head - 1 ? n - 1 : sizeof head - 1);
        long long a = 0, b = 0;
        if (sscanf(head, "%lld %lld", &a, &b) == 2 && a >= 0 && b >= 0 && a <= INT64_MAX / 2 &&
            b <= INT64_MAX / 2) {
            t0_ns = a;
            wall_ns = b;
        }
        p = nl ? nl + 1 : end;
    }

    struct event_log log;
    event_log_init(&log);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct marker_token tok;
        const char *why = marker_parse(p, len, &tok);
        if (why)
            event_log_add_malformed(&log, why, p, len);
        else
            event_log_add(&log, &tok);
        p += len + (nl != NULL);
    }
    struct stage_data d;
    stages_aggregate(&log, t0_ns, wall_ns, &d);
    check(&d, wall_ns);
    for (size_t i = 0; i < d.n_stages; i++)
        (void)event_log_str(&log, d.stages[i].name);
    stages_free(&d);
    event_log_free(&log);
    return 0;
}
