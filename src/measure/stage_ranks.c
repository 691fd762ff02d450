/* stage_ranks: the ranks of a multi-rank job's processes and each rank's stage totals (part of
 * stages_aggregate, see stages.h). A process announces its rank with "M ... mlbench.rank RANK
 * [WORLD_SIZE]" before its first event; its spans, and its workers' (which announce the rank
 * they inherited), are the rank's. */
#include "measure/stages.h"

#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

static int by_pid(const void *a, const void *b)
{
    const struct rank_pid *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

struct arrival {
    struct rank_pid rp;
    int32_t size; /* the WORLD_SIZE announced with it, 0 for none */
    size_t at;    /* index among the announcements */
};

static int by_pid_then_arrival(const void *a, const void *b)
{
    const struct arrival *x = a, *y = b;
    if (x->rp.pid != y->rp.pid)
        return (x->rp.pid > y->rp.pid) - (x->rp.pid < y->rp.pid);
    return (x->at > y->at) - (x->at < y->at);
}

static int by_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Parses "RANK [WORLD_SIZE]"; returns -1 for anything else. */
static int parse_rank(const char *v, int32_t *rank, int32_t *size)
{
    char buf[48];
    size_t len = strlen(v);
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, v, len + 1);
    char *sp = strchr(buf, ' ');
    long r, s = 0;
    if (sp)
        *sp = '\0';
    if (units_parse_long(buf, 0, INT32_MAX - 1, &r) < 0 ||
        (sp && units_parse_long(sp + 1, 1, INT32_MAX, &s) < 0))
        return -1;
    *rank = (int32_t)r;
    *size = (int32_t)s;
    return 0;
}

void stages_read_ranks(const struct event_log *log, struct stage_data *d, struct rank_table *t)
{
    memset(t, 0, sizeof *t);
    struct arrival *a = NULL;
    size_t n_a = 0, cap = 0;
    for (size_t i = 0; i < log->n; i++) {
        const struct marker_event *e = &log->ev[i];
        int32_t rank, size;
        if (e->kind != MARKER_META || strcmp(event_log_str(log, e->name), "mlbench.rank") != 0 ||
            parse_rank(event_log_str(log, e->value), &rank, &size) < 0)
            continue;
        a = xgrow(a, &cap, n_a + 1, sizeof *a);
        a[n_a] = (struct arrival){{e->pid, rank}, size, n_a};
        n_a++;
    }
    if (n_a == 0)
        return;
    /* One rank per process, the first it announced: sorted by pid, arrival order kept among
     * one pid's announcements (the index breaks ties). */
    qsort(a, n_a, sizeof *a, by_pid_then_arrival);
    t->of = xmalloc(n_a * sizeof *t->of);
    for (size_t i = 0; i < n_a; i++) {
        if (t->n > 0 && t->of[t->n - 1].pid == a[i].rp.pid)
            continue;
        t->of[t->n++] = a[i].rp;
        if (a[i].size > d->world_size)
            d->world_size = a[i].size;
    }
    free(a);

    int32_t *ranks = xmalloc(t->n * sizeof *ranks);
    for (size_t i = 0; i < t->n; i++)
        ranks[i] = t->of[i].rank;
    qsort(ranks, t->n, sizeof *ranks, by_int32);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (n == 0 || ranks[n - 1] != ranks[i])
            ranks[n++] = ranks[i];
    if (n > STAGES_MAX_RANKS) { /* the lowest ones are kept; processes of the others: no rank */
        int32_t limit = ranks[STAGES_MAX_RANKS - 1];
        for (size_t i = 0; i < t->n; i++) {
            if (t->of[i].rank > limit) {
                t->of[i].rank = STAGES_NO_RANK;
                d->ranks_dropped++;
            }
        }
        n = STAGES_MAX_RANKS;
    }
    d->ranks = ranks;
    d->n_ranks = n;
}

int32_t stages_rank_of(const struct rank_table *t, int32_t pid)
{
    if (t->n == 0)
        return STAGES_NO_RANK;
    struct rank_pid key = {pid, 0};
    const struct rank_pid *hit = bsearch(&key, t->of, t->n, sizeof *t->of, by_pid);
    return hit ? hit->rank : STAGES_NO_RANK;
}

void stages_read_rank_exits(const struct event_log *log, struct stage_data *d,
                            const struct rank_table *t)
{
    for (size_t i = 0; i < log->n; i++) {
        const struct marker_event *e = &log->ev[i];
        if (e->kind != MARKER_META ||
            strcmp(event_log_str(log, e->name), "mlbench.rank_exit") != 0)
            continue;
        int32_t rank = stages_rank_of(t, e->pid);
        const char *v = event_log_str(log, e->value);
        long n;
        bool killed = strncmp(v, "signal ", 7) == 0;
        if (rank == STAGES_NO_RANK || (!killed && strncmp(v, "exit ", 5) != 0) ||
            units_parse_long(v + (killed ? 7 : 5), killed ? 1 : 0, killed ? 64 : 255, &n) < 0)
            continue;
        bool seen = false; /* one per process: the first */
        for (size_t k = 0; k < d->n_rank_exits && !seen; k++)
            seen = d->rank_exits[k].pid == e->pid;
        if (seen || d->n_rank_exits >= STAGES_MAX_RANKS)
            continue;
        d->rank_exits = xreallocarray(d->rank_exits, d->n_rank_exits + 1, sizeof *d->rank_exits);
        d->rank_exits[d->n_rank_exits++] = (struct rank_exit){
            rank, e->pid, killed ? -1 : (int)n, killed ? (int)n : 0};
    }
}

void stages_read_rank_hosts(const struct event_log *log, struct stage_data *d,
                            const struct rank_table *t)
{
    if (d->n_ranks == 0)
        return;
    d->rank_hosts = xcalloc(d->n_ranks, sizeof *d->rank_hosts);
    for (size_t i = 0; i < log->n; i++) {
        const struct marker_event *e = &log->ev[i];
        if (e->kind != MARKER_META || strcmp(event_log_str(log, e->name), "mlbench.host") != 0)
            continue;
        int32_t rank = stages_rank_of(t, e->pid);
        const int32_t *at = rank == STAGES_NO_RANK ? NULL :
            bsearch(&rank, d->ranks, d->n_ranks, sizeof *d->ranks, by_int32);
        if (at && !d->rank_hosts[at - d->ranks] && *event_log_str(log, e->value))
            d->rank_hosts[at - d->ranks] = e->value;
    }
}

struct rank_item {
    int32_t rank;
    uint32_t stage; /* index in d->stages */
    int64_t start, end;
};

static int item_order(const void *a, const void *b)
{
    const struct rank_item *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    if (x->stage != y->stage)
        return (x->stage > y->stage) - (x->stage < y->stage);
    return (x->start > y->start) - (x->start < y->start);
}

void stages_rank_totals(struct stage_data *d)
{
    if (d->n_ranks == 0 || d->n_stages == 0)
        return;
    uint32_t max_name = 0;
    for (size_t k = 0; k < d->n_stages; k++)
        if (d->stages[k].name > max_name)
            max_name = d->stages[k].name;
    uint32_t *stage_of = xmalloc(((size_t)max_name + 1) * sizeof *stage_of);
    for (size_t k = 0; k < d->n_stages; k++)
        stage_of[d->stages[k].name] = (uint32_t)k;

    struct rank_item *it = xmalloc((d->n_spans + 1) * sizeof *it);
    size_t n = 0;
    for (size_t i = 0; i < d->n_spans; i++)
        if (d->spans[i].rank != STAGES_NO_RANK)
            it[n++] = (struct rank_item){d->spans[i].rank, stage_of[d->spans[i].name],
                                         d->spans[i].start_ns, d->spans[i].end_ns};
    free(stage_of);
    qsort(it, n, sizeof *it, item_order);

    size_t cap = 0;
    for (size_t i = 0; i < n;) {
        struct rank_stage rs = {.rank = it[i].rank, .name = it[i].stage + 1};
        int64_t cur_start = it[i].start, cur_end = it[i].end;
        size_t j = i;
        for (; j < n && it[j].rank == it[i].rank && it[j].stage == it[i].stage; j++) {
            int64_t len = it[j].end - it[j].start;
            rs.count++;
            rs.busy_ns = rs.busy_ns > INT64_MAX - len ? INT64_MAX : rs.busy_ns + len;
            if (it[j].start > cur_end) { /* disjoint: close the merged interval */
                rs.active_ns += cur_end - cur_start;
                cur_start = it[j].start;
                cur_end = it[j].end;
            } else if (it[j].end > cur_end) {
                cur_end = it[j].end;
            }
        }
        rs.active_ns += cur_end - cur_start;
        d->rank_stages = xgrow(d->rank_stages, &cap, d->n_rank_stages + 1, sizeof *d->rank_stages);
        d->rank_stages[d->n_rank_stages++] = rs;
        i = j;
    }
    free(it);
}
