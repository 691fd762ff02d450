/* rings: mlbench's reader of the marker rings (see rings.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "measure/rings.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlbench/marker_ring.h"
#include "util/units.h"
#include "util/xalloc.h"

_Static_assert(sizeof(struct mlb_ring_header) == MLB_RING_HEADER_BYTES, "ring header layout");
_Static_assert(sizeof(struct mlb_ring_record) == MLB_RING_RECORD_BYTES, "ring record layout");

#define FUTURE_SLACK_NS 1000000000 /* records stamped later than the reading, plus this */

/* The names a process announced, by id. */
struct proc_names {
    int32_t pid;   /* its credentials' pid (ours, whatever PID namespace it runs in) */
    char **name;   /* name[id], NULL when not announced; id 1..MLB_RING_MAX_NAMES */
    uint32_t *len;
    size_t cap;    /* ids below cap have a slot */
    size_t cap_used; /* the highest id announced */
    size_t rings;  /* rings of this process still mapped */
};

struct ring {
    struct mlb_ring_header *h;
    const struct mlb_ring_record *rec;
    size_t map_bytes;
    uint64_t mask;
    uint64_t tail;         /* ours: the header's copy is only written, never trusted */
    uint64_t dropped_base; /* the header's count when the run began */
    int32_t pid, tid;      /* from the announcement, checked against the header: the events' */
    struct proc_names *names;
    bool broken;           /* counters out of range: reported once, not read again */
    bool read_in_run;
};

struct ring_set {
    struct ring *r;
    size_t n, cap;
    struct proc_names **procs;
    size_t n_procs, cap_procs;
    bool busy; /* the last drain found a ring an eighth full or more */
};

struct ring_set *rings_new(void)
{
    return xcalloc(1, sizeof(struct ring_set));
}

static void names_free(struct proc_names *p)
{
    for (size_t i = 0; i < p->cap; i++)
        free(p->name[i]);
    free(p->name);
    free(p->len);
    free(p);
}

void rings_free(struct ring_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        munmap(s->r[i].h, s->r[i].map_bytes);
    for (size_t i = 0; i < s->n_procs; i++)
        names_free(s->procs[i]);
    free(s->r);
    free(s->procs);
    free(s);
}

size_t rings_count(const struct ring_set *s)
{
    return s->n;
}

bool rings_busy(const struct ring_set *s)
{
    return s->busy;
}

/* Reports a fault of the ring of (pid, tid) at "<what> <v>" (record 12, head 7). */
static void bad(const struct ring_sink *sink, const char *why, int32_t pid, int32_t tid,
                const char *what, unsigned long long v)
{
    char text[160];
    snprintf(text, sizeof text, "pid %ld tid %ld: %s %llu", (long)pid, (long)tid, what, v);
    sink->malformed(sink->arg, why, text, strlen(text));
}

static struct proc_names *proc_find(struct ring_set *s, int32_t pid)
{
    for (size_t i = 0; i < s->n_procs; i++)
        if (s->procs[i]->pid == pid)
            return s->procs[i];
    return NULL;
}

/* A new process entry, or NULL when RINGS_MAX processes have one already. */
static struct proc_names *proc_new(struct ring_set *s, int32_t pid)
{
    if (s->n_procs >= RINGS_MAX)
        return NULL;
    s->procs = xgrow(s->procs, &s->cap_procs, s->n_procs + 1, sizeof *s->procs);
    struct proc_names *p = xcalloc(1, sizeof *p);
    p->pid = pid;
    s->procs[s->n_procs++] = p;
    return p;
}

/* "mlbench.name ID NAME" of process sender. */
static void on_name(struct ring_set *s, const struct marker_token *tok, pid_t sender,
                    const struct ring_sink *sink)
{
    const char *v = tok->value, *end = v + tok->value_len;
    uint64_t id = 0;
    const char *p = v;
    while (p < end && *p >= '0' && *p <= '9' && id <= MLB_RING_MAX_NAMES)
        id = id * 10 + (uint64_t)(*p++ - '0');
    bool ok = p > v && p < end && *p == ' ' && id >= 1 && id <= MLB_RING_MAX_NAMES;
    const char *name = ok ? p + 1 : NULL;
    size_t len = ok ? (size_t)(end - name) : 0;
    ok = ok && len > 0 && units_utf8_valid(name, len);
    for (size_t i = 0; ok && i < len; i++)
        ok = (unsigned char)name[i] > 0x20 && name[i] != 0x7f;
    if (!ok) {
        sink->malformed(sink->arg, "bad ring name announcement", tok->value, tok->value_len);
        return;
    }
    struct proc_names *pn = proc_find(s, sender);
    /* Writers give ids in order, so a process's table never holds more than it announced:
     * a far id would make a hostile datagram cost memory. */
    if (id > (pn ? pn->cap_used : 0) + 1) {
        sink->malformed(sink->arg, "ring name id out of order", tok->value, tok->value_len);
        return;
    }
    if (!pn && !(pn = proc_new(s, sender))) {
        sink->malformed(sink->arg, "too many processes with ring names", tok->value,
                        tok->value_len);
        return;
    }
    if (id > pn->cap_used)
        pn->cap_used = (size_t)id;
    if (id >= pn->cap) {
        size_t cap = pn->cap ? pn->cap : 64;
        while (cap <= id)
            cap *= 2;
        pn->name = xreallocarray(pn->name, cap, sizeof *pn->name);
        pn->len = xreallocarray(pn->len, cap, sizeof *pn->len);
        memset(pn->name + pn->cap, 0, (cap - pn->cap) * sizeof *pn->name);
        pn->cap = cap;
    }
    free(pn->name[id]); /* announced again (a reused pid): the last counts */
    pn->name[id] = xmalloc(len + 1);
    memcpy(pn->name[id], name, len);
    pn->name[id][len] = '\0';
    pn->len[id] = (uint32_t)len;
}

/* "mlbench.ring CAPACITY" of process sender with the ring's descriptor: checked, mapped, the
 * descriptor closed. */
static void on_ring(struct ring_set *s, const struct marker_token *tok, int fd, pid_t sender,
                    const struct ring_sink *sink)
{
    const char *why = NULL;
    struct stat st;
    void *map = MAP_FAILED;
    size_t bytes = 0;
    uint64_t cap = 0;
    bool cap_ok = tok->value_len > 0 && tok->value_len <= 10;
    for (size_t i = 0; cap_ok && i < tok->value_len; i++) {
        cap_ok = tok->value[i] >= '0' && tok->value[i] <= '9';
        cap = cap * 10 + (uint64_t)(tok->value[i] - '0');
    }
    if (fd < 0) {
        why = "ring announced without its descriptor";
    } else if (s->n >= RINGS_MAX) {
        why = "too many rings at once: ring refused";
    } else if (!cap_ok || cap < MLB_RING_MIN_BYTES / MLB_RING_RECORD_BYTES ||
               cap > MLB_RING_MAX_BYTES / MLB_RING_RECORD_BYTES || (cap & (cap - 1))) {
        why = "bad ring capacity";
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        /* Any user's: the process tree that may hand one in can run as another (sudo -u). */
        why = "ring descriptor is not a file";
    } else {
        int seals = fcntl(fd, F_GET_SEALS);
        bytes = MLB_RING_HEADER_BYTES + (size_t)cap * MLB_RING_RECORD_BYTES;
        /* Without the seal the writer could cut the file under our mapping (SIGBUS). */
        if (seals < 0 || !(seals & F_SEAL_SHRINK))
            why = "ring descriptor not sealed against shrinking";
        else if ((uint64_t)st.st_size < bytes)
            why = "ring smaller than its capacity";
        /* Populated: a page fault per page read one at a time costs far more (bench/RESULTS.md). */
        else if ((map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                             0)) == MAP_FAILED)
            why = "ring cannot be mapped";
    }
    if (fd >= 0)
        close(fd);
    if (!why) {
        const struct mlb_ring_header *h = map;
        if (memcmp(h->magic, MLB_RING_MAGIC, sizeof h->magic) != 0 ||
            h->version != MLB_RING_VERSION || h->record_bytes != MLB_RING_RECORD_BYTES ||
            h->capacity != cap)
            why = "bad ring header";
        else if (h->pid != tok->pid || h->tid != tok->tid)
            why = "ring header names another thread";
    }
    if (why) {
        if (map != MAP_FAILED)
            munmap(map, bytes);
        sink->malformed(sink->arg, why, tok->value, tok->value_len);
        return;
    }
    s->r = xgrow(s->r, &s->cap, s->n + 1, sizeof *s->r);
    struct mlb_ring_header *h = map;
    struct proc_names *pn = proc_find(s, sender);
    if (!pn && !(pn = proc_new(s, sender))) {
        munmap(map, bytes);
        sink->malformed(sink->arg, "too many processes with rings", tok->value, tok->value_len);
        return;
    }
    pn->rings++;
    /* The ring may already hold records (written before the announcement was read): read from
     * the start. Drops before the announcement was read count for the run it arrives in. */
    s->r[s->n++] = (struct ring){
        .h = h, .rec = (const struct mlb_ring_record *)((char *)map + MLB_RING_HEADER_BYTES),
        .map_bytes = bytes, .mask = cap - 1, .pid = tok->pid, .tid = tok->tid, .names = pn,
        .read_in_run = true};
}

bool rings_control(struct ring_set *s, const struct marker_token *tok, int fd, pid_t sender,
                   const struct ring_sink *sink)
{
    static const char ring_key[] = "mlbench.ring", name_key[] = "mlbench.name";
    bool meta = tok->kind == MARKER_META;
    if (meta && tok->name_len == sizeof ring_key - 1 &&
        !memcmp(tok->name, ring_key, tok->name_len)) {
        on_ring(s, tok, fd, sender, sink);
        return true;
    }
    if (fd >= 0)
        close(fd);
    if (meta && tok->name_len == sizeof name_key - 1 &&
        !memcmp(tok->name, name_key, tok->name_len)) {
        on_name(s, tok, sender, sink);
        return true;
    }
    return false;
}

/* Reads ring r; returns true when it stopped at a name not announced yet (!strict). *busy is
 * set when it held an eighth of its capacity or more. */
static bool drain_one(struct ring *r, const struct ring_sink *sink, int64_t now_ns, bool strict,
                      bool *busy)
{
    if (r->broken)
        return false;
    uint64_t head = __atomic_load_n(&r->h->head, __ATOMIC_ACQUIRE);
    if (head - r->tail > r->mask + 1) { /* also head < tail: wrapped below */
        r->broken = true;
        bad(sink, "ring counters out of range", r->pid, r->tid, "head",
            (unsigned long long)head);
        return false;
    }
    if (head != r->tail)
        r->read_in_run = true;
    const uint64_t new_tail = head;
    if (head - r->tail > r->mask / 8)
        *busy = true;
    bool pending = false;
    const struct proc_names *pn = r->names;
    /* Beyond what the sink keeps, records are only counted: a workload marking far more than a
     * run keeps must not make this thread read them one by one. */
    uint64_t room = sink->room ? sink->room(sink->arg) : UINT64_MAX;
    if (head - r->tail > room)
        head = r->tail + room;
    for (; r->tail != head; r->tail++) {
        struct mlb_ring_record rec;
        memcpy(&rec, &r->rec[r->tail & r->mask], sizeof rec); /* the writer may be at it */
        const char *why = NULL;
        if (rec.kind != MARKER_BEGIN && rec.kind != MARKER_END && rec.kind != MARKER_COUNTER &&
            rec.kind != MARKER_INSTANT)
            why = "unknown kind in ring record";
        else if (rec.t_ns < 0 || rec.t_ns > now_ns + FUTURE_SLACK_NS)
            why = "ring record stamped outside the run";
        else if (rec.name >= pn->cap || !pn->name[rec.name]) {
            if (!strict && rec.name >= 1 && rec.name <= MLB_RING_MAX_NAMES) {
                pending = true;
                break;
            }
            why = "unknown name id in ring record";
        }
        if (why) {
            bad(sink, why, r->pid, r->tid, "record", (unsigned long long)r->tail);
            continue;
        }
        struct marker_token tok = {.kind = (char)rec.kind, .t_ns = rec.t_ns, .pid = r->pid,
                                   .tid = r->tid, .name = pn->name[rec.name],
                                   .name_len = pn->len[rec.name], .number = rec.value};
        sink->event(sink->arg, &tok);
    }
    if (!pending && new_tail != r->tail) {
        sink->skip(sink->arg, new_tail - r->tail);
        r->tail = new_tail;
    }
    __atomic_store_n(&r->h->tail, r->tail, __ATOMIC_RELEASE);
    return pending;
}

bool rings_drain(struct ring_set *s, const struct ring_sink *sink, int64_t now_ns, bool strict)
{
    bool pending = false;
    s->busy = false;
    for (size_t i = 0; i < s->n; i++)
        pending |= drain_one(&s->r[i], sink, now_ns, strict, &s->busy);
    return pending;
}

void rings_begin_run(struct ring_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        s->r[i].dropped_base = __atomic_load_n(&s->r[i].h->dropped, __ATOMIC_RELAXED);
        s->r[i].read_in_run = false;
    }
}

/* Whether process pid has ended (a zombie has not: it is reaped after the run). */
static bool process_gone(int32_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

void rings_end_run(struct ring_set *s, struct event_log *log, const struct ring_sink *sink)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct ring *r = &s->r[i];
        uint64_t dropped = __atomic_load_n(&r->h->dropped, __ATOMIC_RELAXED);
        if (log) {
            log->rings += r->read_in_run;
            if (dropped > r->dropped_base)
                event_log_add_ring_drops(log, r->pid, r->tid, dropped - r->dropped_base);
        }
        r->dropped_base = dropped;
        bool gone = process_gone(r->names->pid);
        uint64_t head = __atomic_load_n(&r->h->head, __ATOMIC_RELAXED);
        if (gone && !r->broken && head == r->tail &&
            __atomic_load_n(&r->h->begun, __ATOMIC_RELAXED) == head + 1)
            bad(sink, "torn ring record (its writer died while writing it)", r->pid, r->tid,
                "record", (unsigned long long)head);
        if (gone) {
            munmap(r->h, r->map_bytes);
            r->names->rings--;
        } else {
            s->r[k++] = *r;
        }
    }
    s->n = k;
    /* Names of processes with no ring left and gone. */
    k = 0;
    for (size_t i = 0; i < s->n_procs; i++) {
        if (s->procs[i]->rings == 0 && process_gone(s->procs[i]->pid))
            names_free(s->procs[i]);
        else
            s->procs[k++] = s->procs[i];
    }
    s->n_procs = k;
}
