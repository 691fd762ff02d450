/* proc: the "proc" metric source, the workload's process tree. At every tick it finds the leader,
 * all its descendants and every member of the leader's process group (orphans re-parented to
 * mlbench, the child subreaper, stay in the group) in <proc_root>/<pid>/stat, publishes that list
 * in ctx->tree for the sources that run after it, and sums CPU time, memory, storage I/O,
 * threads and its own I/O waits (processes in state D; block I/O delay where the kernel's delay
 * accounting is on) over it. docs/metrics.md describes each series.
 *
 * Cost: a tick reads the directory of <proc_root>, the stat and io files of the tree's members
 * through descriptors kept open, and the stat file of processes not seen before; processes
 * known to be outside the tree are not read again. smaps_rollup (PSS) is read rarely (see
 * member_resident). docs/metrics.md has the measured cost. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sources/sources.h"
#include "util/xalloc.h"
#include "util/clock.h"

#define KEPT_FDS_MAX 512             /* descriptors kept open for members (stat and io) */
#define PSS_REFRESH_NS 1000000000LL  /* read smaps_rollup at most once a second per process */
#define PSS_COST_FACTOR 1000         /* ... and its reads take at most 0.1 % of the time */
#define PSS_TICK_BUDGET_NS 2000000LL /* smaps_rollup reads of one tick stop after 2 ms */
#define WAIT_THREADS_MAX 1024        /* threads of one member whose schedstat is read per tick */

/* A pid directory of <proc_root> at the last tick. d_ino identifies the directory: procfs gives
 * a reused pid a new inode, so a pid seen before with the same inode is the same process. */
struct entry {
    pid_t pid;
    ino_t ino;
    bool read_again; /* a member at that tick, or its stat could not be read */
};

/* C_WAIT: run-queue wait in ns summed over the member's threads (task/<tid>/schedstat).
 * C_IO_WAIT: block I/O delay of the member's main thread in clock ticks (stat field 42,
 * delayacct_blkio_ticks; counted only while the kernel's task delay accounting is on). */
enum { C_CPU, C_READ, C_WRITE, C_WAIT, C_IO_WAIT, N_COUNTERS };

/* A tree member; kept from one tick to the next (sorted by pid), with its open files. */
struct member {
    pid_t pid, ppid;
    unsigned long long start_ticks; /* starttime: tells a reused pid from the process before */
    double v[N_COUNTERS];           /* cpu in clock ticks, read and written bytes, run-queue wait
                                     * in ns, block I/O delay in ticks; NAN: never read */
    bool io_denied;                 /* EACCES on <pid>/io already counted as an error */
    int stat_fd, io_fd, sched_fd;   /* kept open between ticks; -1: none */
    double pss_bytes;               /* last smaps_rollup Pss; < 0: unreadable */
    double pss_rss_bytes;           /* RSS at that read */
    int64_t pss_due_ns;             /* when smaps_rollup is read again */
};

/* One process read at this tick: a member of the last tick, or one not seen before. */
struct proc_stat {
    pid_t pid, ppid, pgrp;
    unsigned long long start_ticks;
    double cpu_ticks; /* utime + stime + cutime + cstime */
    long long threads;
    long long rss_pages;
    char state;            /* field 3: 'D' is uninterruptible sleep, mostly waiting for disk I/O */
    long long blkio_ticks; /* field 42, delayacct_blkio_ticks; -1 when the line has no field 42 */
    struct member *was; /* the same process among the last tick's members, or NULL */
    size_t entry;       /* its index in st->now */
    bool in_tree;
};

/* A counter summed over the tree, kept monotonic within a run (see counters_update). */
struct tree_counter {
    double lost; /* last values of members gone without a tree member reaping them */
    double last; /* value written at the previous tick; NAN before the first */
};

struct proc_state {
    DIR *dir; /* proc_root, rewound at every tick */
    int dir_fd;
    pid_t leader; /* the leader the lists below were built for */
    size_t s_cpu, s_rss, s_read, s_write, s_threads, s_count, s_wait, s_blocked, s_io_wait;
    bool wait_on;  /* schedstat readable at open: process_cpu_wait_seconds_total registered */
    bool delayacct_on; /* kernel.task_delayacct was 1 at open: process_io_wait_seconds_total */
    struct entry *seen, *now; /* pid directories at the last tick and at this one */
    size_t n_seen, n_now, cap_seen, cap_now;
    struct proc_stat *all; /* processes read at this tick */
    size_t n_all, cap_all;
    size_t *tree_at; /* tree_at[i]: index in all[] of ctx->tree[i] */
    size_t cap_tree_at;
    struct member *prev, *cur;
    size_t n_prev, n_cur, cap_prev, cap_cur;
    size_t kept_fds;
    struct tree_counter counter[N_COUNTERS];
    char buf[4096];
};

/* One read() of fd from offset 0 into buf (NUL-terminated). Returns the length or -1 (errno). */
static ssize_t pread_once(int fd, char *buf, size_t cap)
{
    ssize_t n;
    do
        n = pread(fd, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* Opens <dir_fd>/path; with keep, leaves it open in *fd (counted in kept_fds) when fewer than
 * KEPT_FDS_MAX are. Reads it once. Returns the length, or -1 with errno set (ENOENT, ESRCH: the
 * process is gone). */
static ssize_t read_path(struct proc_state *st, const char *path, int *fd, bool keep)
{
    int f = openat(st->dir_fd, path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return -1;
    ssize_t n = pread_once(f, st->buf, sizeof st->buf);
    int saved = errno;
    if (keep && st->kept_fds < KEPT_FDS_MAX) {
        *fd = f;
        st->kept_fds++;
    } else {
        close(f);
    }
    errno = saved;
    return n;
}

static void close_kept(struct proc_state *st, int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        st->kept_fds--;
        *fd = -1;
    }
}

/* Reads <pid>/<file> through the descriptor kept in *fd, else by path (keeping it when asked).
 * A kept descriptor that fails (the process is gone, or the pid now names another process) is
 * closed and the path tried once. */
static ssize_t read_member_file(struct proc_state *st, pid_t pid, const char *file, int *fd,
                                bool keep)
{
    if (*fd >= 0) {
        ssize_t n = pread_once(*fd, st->buf, sizeof st->buf);
        if (n > 0 || (n < 0 && errno == EACCES))
            return n;
        close_kept(st, fd);
    }
    char path[48];
    snprintf(path, sizeof path, "%d/%s", (int)pid, file);
    return read_path(st, path, fd, keep);
}

/* Parses a decimal integer (optional '-') after spaces; too large a number saturates. Returns the
 * end, or NULL. */
static const char *parse_ll(const char *p, long long *out)
{
    while (*p == ' ')
        p++;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        return NULL;
    long long v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        int digit = *p - '0';
        v = v > (LLONG_MAX - digit) / 10 ? LLONG_MAX : v * 10 + digit;
    }
    *out = neg ? -v : v;
    return p;
}

/* Parses one <pid>/stat line. comm (field 2) may hold spaces and parentheses: the fields after
 * it start after the LAST ')'. Returns 0, or -1 when the line is malformed. */
static int parse_stat(const char *buf, size_t len, struct proc_stat *ps)
{
    const char *close_paren = memrchr(buf, ')', len);
    long long pid;
    if (!close_paren || !parse_ll(buf, &pid) || close_paren[1] != ' ')
        return -1;
    const char *p = close_paren + 2;
    if (!*p || p[1] != ' ') /* field 3, state: one letter */
        return -1;
    ps->state = *p;
    p += 2;
    /* Fields 4 (ppid) to 24 (rss): f[i] is field i + 4. */
    long long f[21];
    for (size_t i = 0; i < 21; i++)
        if (!(p = parse_ll(p, &f[i])))
            return -1;
    ps->pid = (pid_t)pid;
    ps->ppid = (pid_t)f[0];
    ps->pgrp = (pid_t)f[1];
    /* utime 14, stime 15, cutime 16, cstime 17: cutime/cstime hold the children that exited
     * and were waited for, so short-lived workers are counted. */
    double ticks = (double)f[10] + (double)f[11] + (double)f[12] + (double)f[13];
    ps->cpu_ticks = ticks > 0 ? ticks : 0;
    ps->threads = f[16];
    ps->start_ticks = (unsigned long long)f[18];
    ps->rss_pages = f[20];
    /* Fields 25 to 42: the last, delayacct_blkio_ticks (since Linux 2.6.18). */
    long long g = -1;
    for (int field = 25; field <= 42 && p; field++)
        p = parse_ll(p, &g);
    ps->blkio_ticks = p && g >= 0 ? g : -1;
    ps->was = NULL;
    ps->in_tree = false;
    return 0;
}

/* Value of "key <number>" at the start of a line of buf, or -1 when absent. */
static long long field_value(const char *buf, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = buf; p; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (!strncmp(p, key, klen)) {
            long long v;
            return parse_ll(p + klen, &v) && v >= 0 ? v : -1;
        }
    }
    return -1;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_by_ppid(const void *a, const void *b)
{
    const struct proc_stat *x = a, *y = b;
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct member *member_find(struct member *m, size_t n, pid_t pid)
{
    struct member key = {.pid = pid};
    return n ? bsearch(&key, m, n, sizeof *m, cmp_member) : NULL;
}

static struct entry *entry_find(struct entry *e, size_t n, pid_t pid)
{
    struct entry key = {.pid = pid};
    return n ? bsearch(&key, e, n, sizeof *e, cmp_entry) : NULL;
}

/* Lists the pid directories of <proc_root> into st->now, sorted by pid. */
static void list_pids(struct proc_state *st, uint64_t *errors)
{
    st->n_now = 0;
    rewinddir(st->dir);
    struct dirent *de;
    errno = 0;
    while ((de = readdir(st->dir))) {
        long long pid;
        const char *end = parse_ll(de->d_name, &pid);
        if (!end || *end || pid <= 0)
            continue;
        st->now = xgrow(st->now, &st->cap_now, st->n_now + 1, sizeof *st->now);
        st->now[st->n_now++] = (struct entry){(pid_t)pid, de->d_ino, false};
        errno = 0;
    }
    if (errno)
        (*errors)++;
    if (st->n_now > 1)
        qsort(st->now, st->n_now, sizeof *st->now, cmp_entry);
}

/* Reads the stat file of every process that may be in the tree into st->all: the members of the
 * last tick, the pids not seen before and those whose stat could not be read last time. A pid
 * seen outside the tree with the same directory inode is the same process, still outside (a
 * process does not become a descendant later; one that joins the leader's group with setpgid
 * is not noticed), and is skipped. Processes that vanish meanwhile are skipped: they are gone. */
static void read_candidates(struct proc_state *st)
{
    st->n_all = 0;
    for (size_t i = 0; i < st->n_now; i++) {
        struct entry *e = &st->now[i];
        const struct entry *seen = entry_find(st->seen, st->n_seen, e->pid);
        if (seen && seen->ino == e->ino && !seen->read_again)
            continue;
        e->read_again = true; /* until it is read and found outside the tree */
        struct member *was = member_find(st->prev, st->n_prev, e->pid);
        int unused = -1;
        ssize_t n = was ? read_member_file(st, e->pid, "stat", &was->stat_fd, true)
                        : read_member_file(st, e->pid, "stat", &unused, false);
        if (n <= 0)
            continue;
        st->all = xgrow(st->all, &st->cap_all, st->n_all + 1, sizeof *st->all);
        struct proc_stat *ps = &st->all[st->n_all];
        if (parse_stat(st->buf, (size_t)n, ps) != 0)
            continue;
        if (was && was->start_ticks == ps->start_ticks)
            ps->was = was;
        ps->entry = i;
        e->read_again = false;
        st->n_all++;
    }
}

static void tree_push(struct proc_state *st, struct sample_ctx *ctx, size_t at)
{
    ctx->tree = xgrow(ctx->tree, &ctx->cap_tree, ctx->n_tree + 1, sizeof *ctx->tree);
    st->tree_at = xgrow(st->tree_at, &st->cap_tree_at, ctx->n_tree + 1, sizeof *st->tree_at);
    st->all[at].in_tree = true;
    st->now[st->all[at].entry].read_again = true;
    st->tree_at[ctx->n_tree] = at;
    ctx->tree[ctx->n_tree++] = st->all[at].pid;
}

/* Fills ctx->tree: the leader first, then its process group and the members of the last tick
 * still alive (a descendant stays one when it leaves the group and its parent dies), then their
 * descendants, breadth-first. */
static void find_tree(struct proc_state *st, struct sample_ctx *ctx)
{
    if (st->n_all > 1)
        qsort(st->all, st->n_all, sizeof *st->all, cmp_by_ppid);
    for (size_t i = 0; i < st->n_all; i++)
        if (st->all[i].pid == ctx->leader) {
            tree_push(st, ctx, i);
            break;
        }
    for (size_t i = 0; i < st->n_all; i++)
        if ((st->all[i].pgrp == ctx->leader || st->all[i].was) && !st->all[i].in_tree)
            tree_push(st, ctx, i);
    for (size_t q = 0; q < ctx->n_tree; q++) {
        pid_t parent = ctx->tree[q];
        size_t lo = 0, hi = st->n_all; /* first entry with ppid >= parent */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (st->all[mid].ppid < parent)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i < st->n_all && st->all[i].ppid == parent; i++)
            if (!st->all[i].in_tree)
                tree_push(st, ctx, i);
    }
}

/* Reads <pid>/io into m->v[C_READ], m->v[C_WRITE]. On failure keeps the values of the previous
 * tick (a process vanishing between the scan and this read is normal) and counts an error;
 * EACCES (a process of another user, e.g. setuid) is counted once per process. */
static void read_io(struct proc_state *st, struct member *m, uint64_t *errors)
{
    if (read_member_file(st, m->pid, "io", &m->io_fd, true) < 0) {
        if (errno != EACCES || !m->io_denied)
            (*errors)++;
        m->io_denied = errno == EACCES;
        return;
    }
    long long rd = field_value(st->buf, "read_bytes:");
    long long wr = field_value(st->buf, "write_bytes:");
    if (rd < 0 || wr < 0) {
        (*errors)++;
        return;
    }
    m->v[C_READ] = (double)rd;
    m->v[C_WRITE] = (double)wr;
}

/* Reads the run-queue wait of every thread of m (second field of <pid>/task/<tid>/schedstat:
 * ns spent runnable but waiting for a CPU) into m->v[C_WAIT]; NAN when no thread's file could
 * be read. A single-threaded member (most workers) is read through <pid>/schedstat, its main
 * thread's, with the descriptor kept open like stat's; the threads of a multi-threaded one are
 * not kept open: they come and go faster than processes. A thread that exits takes its wait
 * with it (nobody inherits it, unlike cutime): counters_update keeps the series monotonic, and
 * what it waited since the last tick is not seen. */
static void read_wait(struct proc_state *st, struct member *m, long long threads,
                      uint64_t *errors)
{
    if (threads == 1) {
        long long run_ns, wait_ns;
        const char *p = read_member_file(st, m->pid, "schedstat", &m->sched_fd, true) > 0
                            ? parse_ll(st->buf, &run_ns) : NULL;
        if (p && parse_ll(p, &wait_ns) && wait_ns >= 0)
            m->v[C_WAIT] = (double)wait_ns;
        else
            (*errors)++;
        return;
    }
    char path[48];
    snprintf(path, sizeof path, "%d/task", (int)m->pid);
    int fd = openat(st->dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        (*errors)++;
        return;
    }
    double sum = 0;
    size_t n_read = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n_read < WAIT_THREADS_MAX) {
        long long tid, run_ns, wait_ns;
        const char *end = parse_ll(de->d_name, &tid);
        if (!end || *end || tid <= 0)
            continue;
        char rel[80];
        snprintf(rel, sizeof rel, "%d/task/%lld/schedstat", (int)m->pid, tid);
        int unused = -1;
        const char *p = read_path(st, rel, &unused, false) > 0 ? parse_ll(st->buf, &run_ns) : NULL;
        if (p && parse_ll(p, &wait_ns) && wait_ns >= 0) {
            sum += (double)wait_ns;
            n_read++;
        }
    }
    closedir(d);
    if (n_read)
        m->v[C_WAIT] = sum;
    else
        (*errors)++;
}

/* Resident bytes of a member: PSS (shared pages divided among the processes sharing them, so
 * forked workers are not counted many times) from <pid>/smaps_rollup, else RSS from stat
 * (smaps_rollup unreadable: kernel before 4.14, another user's process, a zombie).
 * smaps_rollup walks the page tables holding the process's mmap lock (measured: about 10 us
 * per MB resident, 20 ms for 2 GB), which would stall the workload's mmap and munmap. So it is
 * read when a process is first seen, then at most once a second and no more than 0.1 % of the
 * time (a 2 GB process: every 20 s), spread by pid so that the members are not all read at the
 * same tick; once a tick has spent PSS_TICK_BUDGET_NS on them, the reads due wait for the next
 * ticks. In between, the PSS read last moves with the RSS; before the first read, RSS is used.
 * *spent_ns adds up this tick's smaps_rollup time. */
static double member_resident(struct proc_state *st, struct member *m, double rss_bytes,
                              int64_t tick_ns, int64_t *spent_ns)
{
    if (tick_ns >= m->pss_due_ns && *spent_ns < PSS_TICK_BUDGET_NS) {
        char path[48];
        snprintf(path, sizeof path, "%d/smaps_rollup", (int)m->pid);
        int unused = -1;
        int64_t t0 = mono_ns();
        long long kb = read_path(st, path, &unused, false) > 0 ? field_value(st->buf, "Pss:") : -1;
        int64_t cost = mono_ns() - t0;
        *spent_ns += cost;
        int64_t wait = cost * PSS_COST_FACTOR;
        if (wait < PSS_REFRESH_NS)
            wait = PSS_REFRESH_NS;
        m->pss_bytes = kb < 0 ? -1 : (double)kb * 1024;
        m->pss_rss_bytes = rss_bytes;
        m->pss_due_ns = tick_ns + wait + wait / 32 * (m->pid % 16);
    }
    if (m->pss_bytes < 0)
        return rss_bytes;
    double pss = m->pss_bytes + (rss_bytes - m->pss_rss_bytes);
    return pss > 0 ? pss : 0;
}

/* Whether a member gone since the previous tick was reaped by a tree member, so that its totals
 * now show in that member's cutime/cstime and io: its parent, or the first parent up its chain
 * that did not vanish too, is alive in the tree now. */
static bool reaped_in_tree(struct proc_state *st, const struct member *gone)
{
    pid_t parent = gone->ppid;
    for (size_t depth = 0; depth <= st->n_prev; depth++) {
        if (member_find(st->cur, st->n_cur, parent))
            return true;
        const struct member *up = member_find(st->prev, st->n_prev, parent);
        if (!up)
            return false;
        parent = up->ppid;
    }
    return false;
}

/* Updates the counters from st->cur (this tick) and st->prev (the previous one) and writes them.
 *
 * A sum over the processes alive now is not monotonic: a member that exits takes its CPU time and
 * I/O with it unless a tree member waits for it (the kernel then adds them to the waiter's
 * cutime/cstime and io). So each counter keeps an offset, `lost`: when a member vanishes and no
 * tree member can have reaped it (its parent chain leaves the tree: the leader itself, orphans
 * reaped by mlbench), its last values are added to `lost`. The value written is the sum over the
 * tree plus `lost`; should it still fall (a parent that ignores SIGCHLD reaps without
 * accounting), `lost` absorbs the drop so the counter never decreases within a run. What a
 * vanished process did after the previous tick is not seen. run_start resets the offsets. */
static void counters_update(struct proc_state *st, const struct sample_ctx *ctx,
                            struct sample_table *tab, size_t row)
{
    for (size_t i = 0; i < st->n_prev; i++) {
        const struct member *p = &st->prev[i];
        const struct member *now = member_find(st->cur, st->n_cur, p->pid);
        if (now && now->start_ticks == p->start_ticks)
            continue;
        /* A reaper inherits CPU time and I/O bytes, never run-queue wait or I/O delay. */
        bool reaped = reaped_in_tree(st, p);
        for (int c = 0; c < N_COUNTERS; c++)
            if (!isnan(p->v[c]) && (!reaped || c == C_WAIT || c == C_IO_WAIT))
                st->counter[c].lost += p->v[c];
    }
    if (st->n_cur == 0)
        return;
    const size_t series[N_COUNTERS] = {st->s_cpu, st->s_read, st->s_write, st->s_wait,
                                        st->s_io_wait};
    for (int c = 0; c < N_COUNTERS; c++) {
        if ((c == C_WAIT && !st->wait_on) || (c == C_IO_WAIT && !st->delayacct_on))
            continue;
        double sum = 0;
        bool any = false;
        for (size_t i = 0; i < st->n_cur; i++)
            if (!isnan(st->cur[i].v[c])) {
                sum += st->cur[i].v[c];
                any = true;
            }
        if (!any)
            continue;
        struct tree_counter *tc = &st->counter[c];
        double value = sum + tc->lost;
        if (!isnan(tc->last) && value < tc->last) {
            tc->lost += tc->last - value;
            value = tc->last;
        }
        tc->last = value;
        double scale = c == C_CPU || c == C_IO_WAIT ? (double)ctx->ticks_per_s
                       : c == C_WAIT                 ? 1e9
                                                     : 1;
        sample_table_set(tab, series[c], row, value / scale);
    }
}

/* Makes st->cur the members of this tick, moving each one's open files and PSS state over from
 * the last tick's record of the same process; reads io and resident memory. */
static void build_members(struct proc_state *st, const struct sample_ctx *ctx, double *resident,
                          double *threads, double *blocked, uint64_t *errors)
{
    if (ctx->n_tree > st->cap_cur) {
        st->cap_cur = ctx->n_tree;
        st->cur = xreallocarray(st->cur, st->cap_cur, sizeof *st->cur);
    }
    st->n_cur = ctx->n_tree;
    int64_t now_ns = mono_ns(), pss_spent_ns = 0;
    *resident = *threads = *blocked = 0;
    for (size_t i = 0; i < ctx->n_tree; i++) {
        const struct proc_stat *ps = &st->all[st->tree_at[i]];
        struct member *m = &st->cur[i];
        double io_wait = ps->blkio_ticks >= 0 ? (double)ps->blkio_ticks : NAN;
        *m = (struct member){ps->pid, ps->ppid, ps->start_ticks,
                             {ps->cpu_ticks, NAN, NAN, NAN, io_wait}, false, -1, -1, -1, -1, 0, 0};
        if (ps->was) {
            struct member *was = ps->was;
            m->v[C_READ] = was->v[C_READ];
            m->v[C_WRITE] = was->v[C_WRITE];
            m->io_denied = was->io_denied;
            m->stat_fd = was->stat_fd;
            m->io_fd = was->io_fd;
            m->sched_fd = was->sched_fd;
            m->pss_bytes = was->pss_bytes;
            m->pss_rss_bytes = was->pss_rss_bytes;
            m->pss_due_ns = was->pss_due_ns;
            was->stat_fd = was->io_fd = was->sched_fd = -1;
        }
        read_io(st, m, errors);
        if (st->wait_on)
            read_wait(st, m, ps->threads, errors);
        *resident += member_resident(st, m, (double)ps->rss_pages * (double)ctx->page_size, now_ns,
                                     &pss_spent_ns);
        *threads += (double)ps->threads;
        *blocked += ps->state == 'D';
    }
    if (st->n_cur > 1)
        qsort(st->cur, st->n_cur, sizeof *st->cur, cmp_member);
}

/* Closes the files of the last tick's members that are gone, then makes this tick the last. */
static void end_tick(struct proc_state *st)
{
    for (size_t i = 0; i < st->n_prev; i++) {
        close_kept(st, &st->prev[i].stat_fd);
        close_kept(st, &st->prev[i].io_fd);
        close_kept(st, &st->prev[i].sched_fd);
    }
    struct member *m = st->prev;
    st->prev = st->cur;
    st->cur = m;
    size_t cap = st->cap_prev;
    st->cap_prev = st->cap_cur;
    st->cap_cur = cap;
    st->n_prev = st->n_cur;
    st->n_cur = 0;

    struct entry *e = st->seen;
    st->seen = st->now;
    st->now = e;
    cap = st->cap_seen;
    st->cap_seen = st->cap_now;
    st->cap_now = cap;
    st->n_seen = st->n_now;
    st->n_now = 0;
}

/* Forgets the processes seen (a new run, or a new leader). */
static void forget(struct proc_state *st)
{
    for (size_t i = 0; i < st->n_prev; i++) {
        close_kept(st, &st->prev[i].stat_fd);
        close_kept(st, &st->prev[i].io_fd);
        close_kept(st, &st->prev[i].sched_fd);
    }
    st->n_prev = 0;
    st->n_seen = 0;
}

static void proc_sample(void *state, struct sample_ctx *ctx, struct sample_table *tab, size_t row,
                        uint64_t *errors)
{
    struct proc_state *st = state;
    ctx->n_tree = 0;
    if (ctx->leader <= 0)
        return;
    if (ctx->leader != st->leader) {
        forget(st);
        st->leader = ctx->leader;
    }
    list_pids(st, errors);
    read_candidates(st);
    find_tree(st, ctx);
    double resident, threads, blocked;
    build_members(st, ctx, &resident, &threads, &blocked, errors);

    sample_table_set(tab, st->s_count, row, (double)ctx->n_tree);
    if (ctx->n_tree) {
        sample_table_set(tab, st->s_rss, row, resident);
        sample_table_set(tab, st->s_threads, row, threads);
        sample_table_set(tab, st->s_blocked, row, blocked);
    }
    counters_update(st, ctx, tab, row);
    end_tick(st);
}

static void proc_run_start(void *state)
{
    struct proc_state *st = state;
    forget(st);
    st->leader = 0;
    for (int c = 0; c < N_COUNTERS; c++)
        st->counter[c] = (struct tree_counter){0, NAN};
}

static void proc_close(void *state)
{
    struct proc_state *st = state;
    if (!st)
        return;
    forget(st);
    if (st->dir)
        closedir(st->dir);
    free(st->seen);
    free(st->now);
    free(st->all);
    free(st->tree_at);
    free(st->prev);
    free(st->cur);
    free(st);
}

/* Fails when <proc_root> is not a readable procfs: <proc_root>/self/stat must parse. */
static int proc_open(struct series_registry *reg, const struct sample_ctx *ctx, void **state,
                     char *err, size_t errlen)
{
    if (ctx->ticks_per_s <= 0 || ctx->page_size <= 0) {
        snprintf(err, errlen, "sysconf gave no clock tick rate or page size");
        return -1;
    }
    struct proc_state *st = xcalloc(1, sizeof *st);
    st->dir = opendir(ctx->proc_root);
    if (!st->dir) {
        snprintf(err, errlen, "cannot open %s: %s", ctx->proc_root, strerror(errno));
        proc_close(st);
        return -1;
    }
    st->dir_fd = dirfd(st->dir);
    struct proc_stat self;
    int unused = -1;
    ssize_t n = read_path(st, "self/stat", &unused, false);
    if (n <= 0 || parse_stat(st->buf, (size_t)n, &self) != 0) {
        snprintf(err, errlen, "cannot read %s/self/stat: %s (is procfs mounted there?)",
                 ctx->proc_root, n < 0 ? strerror(errno) : "not in the /proc/<pid>/stat format");
        proc_close(st);
        return -1;
    }
    st->s_cpu = series_register(reg, "proc", "process_cpu_seconds_total", "", SERIES_COUNTER);
    if (ctx->ncpu > 0) /* the tree cannot keep more CPUs busy than there are */
        reg->defs[st->s_cpu].max_rate = ctx->ncpu;
    st->s_rss = series_register(reg, "proc", "process_resident_bytes", "", SERIES_GAUGE);
    st->s_read = series_register(reg, "proc", "process_read_bytes_total", "", SERIES_COUNTER);
    st->s_write = series_register(reg, "proc", "process_written_bytes_total", "", SERIES_COUNTER);
    st->s_threads = series_register(reg, "proc", "process_threads", "", SERIES_GAUGE);
    st->s_count = series_register(reg, "proc", "process_count", "", SERIES_GAUGE);
    /* Without CONFIG_SCHED_INFO there is no schedstat: the series is then not registered. */
    long long run_ns;
    n = read_path(st, "self/schedstat", &unused, false);
    st->wait_on = n > 0 && parse_ll(st->buf, &run_ns);
    if (st->wait_on)
        st->s_wait = series_register(reg, "proc", "process_cpu_wait_seconds_total", "",
                                     SERIES_COUNTER);
    /* The workload's own I/O waits: which of its processes are in state D at each tick, and,
     * where the kernel's task delay accounting is on (kernel.task_delayacct, off by default
     * since Linux 5.14), the time their main threads were delayed on block I/O. */
    st->s_blocked = series_register(reg, "proc", "process_io_blocked_tasks", "", SERIES_GAUGE);
    n = read_path(st, "sys/kernel/task_delayacct", &unused, false);
    st->delayacct_on = n > 0 && st->buf[0] == '1';
    if (st->delayacct_on)
        st->s_io_wait = series_register(reg, "proc", "process_io_wait_seconds_total", "",
                                        SERIES_COUNTER);
    proc_run_start(st);
    *state = st;
    return 0;
}

const struct metric_source proc_source = {
    .name = "proc",
    .open = proc_open,
    .sample = proc_sample,
    .run_start = proc_run_start,
    .close = proc_close,
};
