/* event_log: append-only store of one repetition's marker events (see event_log.h). */
#include "measure/event_log.h"

#include <stdio.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "util/hash.h"

void event_log_init(struct event_log *log)
{
    memset(log, 0, sizeof *log);
    log->cap_strings = 16;
    log->strings = xcalloc(log->cap_strings, sizeof *log->strings);
    log->strings[0] = xstrdup("");
    log->n_strings = 1;
    log->n_slots = 64;
    log->slots = xcalloc(log->n_slots, sizeof *log->slots);
}

void event_log_free(struct event_log *log)
{
    for (size_t i = 0; i < log->n_strings; i++)
        free(log->strings[i]);
    free(log->strings);
    free(log->slots);
    free(log->ev);
    for (size_t i = 0; i < log->n_hosts; i++)
        host_samples_free(&log->hosts[i]);
    free(log->hosts);
    free(log->drops);
    memset(log, 0, sizeof *log);
}

void event_log_add_ring_drops(struct event_log *log, int32_t pid, int32_t tid, uint64_t events)
{
    log->ring_dropped = log->ring_dropped + events < events ? UINT64_MAX
                                                            : log->ring_dropped + events;
    log->drops = xreallocarray(log->drops, log->n_drops + 1, sizeof *log->drops);
    log->drops[log->n_drops++] = (struct ring_drop){pid, tid, events};
}

static int by_time_then_arrival(const void *a, const void *b)
{
    const struct marker_event *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void event_log_sort(struct event_log *log)
{
    for (size_t i = 1; i < log->n; i++) {
        if (log->ev[i].t_ns < log->ev[i - 1].t_ns) {
            qsort(log->ev, log->n, sizeof *log->ev, by_time_then_arrival);
            return;
        }
    }
}

void host_samples_free(struct host_samples *h)
{
    size_t n = h->tab.n_series;
    sample_table_free(&h->tab);
    for (size_t i = 0; h->defs && i < n; i++) {
        free(h->defs[i].name);
        free(h->defs[i].labels);
        free((char *)h->defs[i].source);
    }
    free(h->defs);
    free(h->host);
    memset(h, 0, sizeof *h);
}

void event_log_add_host(struct event_log *log, struct host_samples *h)
{
    log->hosts = xreallocarray(log->hosts, log->n_hosts + 1, sizeof *log->hosts);
    log->hosts[log->n_hosts++] = *h;
    memset(h, 0, sizeof *h);
}

static void rehash(struct event_log *log)
{
    size_t n = log->n_slots * 2;
    uint32_t *slots = xcalloc(n, sizeof *slots);
    for (uint32_t id = 1; id < log->n_strings; id++) {
        const char *s = log->strings[id];
        size_t i = hash_bytes(s, strlen(s)) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id;
    }
    free(log->slots);
    log->slots = slots;
    log->n_slots = n;
}

uint32_t event_log_intern(struct event_log *log, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    size_t mask = log->n_slots - 1;
    size_t i = hash_bytes(s, len) & mask;
    for (; log->slots[i]; i = (i + 1) & mask) {
        const char *t = log->strings[log->slots[i]];
        if (strncmp(t, s, len) == 0 && t[len] == '\0')
            return log->slots[i];
    }
    if (log->n_strings == log->cap_strings) {
        log->cap_strings *= 2;
        log->strings = xreallocarray(log->strings, log->cap_strings, sizeof *log->strings);
    }
    uint32_t id = (uint32_t)log->n_strings++;
    log->strings[id] = xstrndup(s, len);
    log->slots[i] = id;
    if (log->n_strings * 2 > log->n_slots)
        rehash(log);
    return id;
}

const char *event_log_str(const struct event_log *log, uint32_t id)
{
    return id < log->n_strings ? log->strings[id] : "";
}

/* Doubles the event array. Its new pages are populated at once: one page fault per 4 KiB page,
 * taken one by one on the receiver's thread, made it fall behind a workload writing its rings
 * at full speed (13 us a fault in a VM measured, 0.6 us a page populated; bench/RESULTS.md). */
static void grow(struct event_log *log)
{
    size_t old = log->cap;
    log->cap = log->cap ? log->cap * 2 : 1024;
    log->ev = xreallocarray(log->ev, log->cap, sizeof *log->ev);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)(log->ev + old) + page - 1) & ~(page - 1);
    uintptr_t to = (uintptr_t)(log->ev + log->cap) & ~(page - 1);
    if (to > from + 64 * page) /* large arrays only; an old kernel (< 5.14) says EINVAL */
        (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}

void event_log_add(struct event_log *log, const struct marker_token *tok)
{
    if (log->n >= EVENT_LOG_MAX_EVENTS) {
        log->dropped++;
        return;
    }
    if (log->n == log->cap)
        grow(log);
    struct marker_event *e = &log->ev[log->n];
    e->seq = (uint32_t)log->n++; /* < EVENT_LOG_MAX_EVENTS */
    e->t_ns = tok->t_ns;
    e->pid = tok->pid;
    e->tid = tok->tid;
    e->kind = tok->kind;
    e->number = tok->number;
    e->name = event_log_intern(log, tok->name, tok->name_len);
    e->value = tok->value ? event_log_intern(log, tok->value, tok->value_len) : 0;
}

void event_log_add_foreign(struct event_log *log, pid_t pid)
{
    if (!log->foreign++)
        log->first_foreign_pid = (int32_t)pid;
}

void event_log_add_malformed(struct event_log *log, const char *reason, const char *buf, size_t len)
{
    log->malformed++;
    if (log->n_examples >= EVENT_LOG_EXAMPLES)
        return;
    for (size_t i = 0; i < log->n_examples; i++) /* one example per reason is enough */
        if (strncmp(log->example[i], reason, strlen(reason)) == 0 &&
            log->example[i][strlen(reason)] == ':')
            return;
    char *out = log->example[log->n_examples++];
    int k = snprintf(out, sizeof log->example[0], "%s: \"", reason);
    size_t o = k > 0 ? (size_t)k : 0;
    /* Keep the example printable ASCII (valid JSON): other bytes become '?'. */
    for (size_t i = 0; i < len && o + 5 < sizeof log->example[0]; i++)
        out[o++] = ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f) ? '?' : buf[i];
    if (len > 0 && o + 5 >= sizeof log->example[0])
        memcpy(out + o, "...", 3), o += 3;
    out[o++] = '"';
    out[o] = '\0';
}
