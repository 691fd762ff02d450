/* Unit tests of src/sources/proc.c (the workload's process tree as a metric source), against
 * fake /proc trees that each test writes into a temporary directory with
 * tests/fakes/proc/fake_fs.h, and once against the real /proc with 50 forked children.
 *
 * Expected values are worked out by hand in the comments, with ticks_per_s = 100 and
 * page_size = 4096 in the fake runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fakes/proc/fake_fs.h"
#include "measure/sampler.h"
#include "sources/sources.h"

#define TOL 1e-9

/* One process of a fake tree: what <pid>/stat says. */
struct fake_proc {
    int pid;
    const char *comm;
    int ppid, pgrp;
    unsigned utime, stime, cutime, cstime; /* clock ticks */
    int threads;
    unsigned long long start; /* starttime, clock ticks after boot */
    long rss_pages;
};

/* Writes <pid>/stat in the kernel's format (52 fields), with state (field 3) and
 * delayacct_blkio_ticks (field 42). */
static void write_proc_waiting(const char *root, const struct fake_proc *p, char state,
                               unsigned blkio)
{
    char rel[32];
    snprintf(rel, sizeof rel, "%d/stat", p->pid);
    fake_write(root, rel,
               "%d (%s) %c %d %d %d 34816 %d 4194304 1200 0 3 0 %u %u %u %u 20 0 %d 0 %llu "
               "123456789 %ld 18446744073709551615 1 1 0 0 0 0 0 4096 16386 0 0 0 17 1 0 0 %u 0 "
               "0 0 0 0 0 0 0 0 0\n",
               p->pid, p->comm, state, p->ppid, p->pgrp, p->pgrp, p->pgrp, p->utime, p->stime,
               p->cutime, p->cstime, p->threads, p->start, p->rss_pages, blkio);
}

static void write_proc(const char *root, const struct fake_proc *p)
{
    write_proc_waiting(root, p, 'S', 0);
}

static void write_io(const char *root, int pid, unsigned long long rd, unsigned long long wr)
{
    char rel[32];
    snprintf(rel, sizeof rel, "%d/io", pid);
    fake_write(root, rel,
               "rchar: 99999\nwchar: 88888\nsyscr: 10\nsyscw: 5\nread_bytes: %llu\n"
               "write_bytes: %llu\ncancelled_write_bytes: 777\n",
               rd, wr);
}

static void write_pss(const char *root, int pid, unsigned kb)
{
    char rel[40];
    snprintf(rel, sizeof rel, "%d/smaps_rollup", pid);
    fake_write(root, rel,
               "55d0c0a00000-7ffc8b1ff000 ---p 00000000 00:00 0                  [rollup]\n"
               "Rss:               99999 kB\nPss:               %u kB\nPss_Dirty:          10 kB\n"
               "Pss_Anon:           10 kB\nShared_Clean:        0 kB\n",
               kb);
}

/* A fake procfs with mlbench (pid 50, the subreaper, child of init) as self. */
static char *fake_procfs(void)
{
    char *root = fake_root_new();
    const struct fake_proc init = {1, "systemd", 0, 1, 10, 10, 0, 0, 1, 1, 100};
    const struct fake_proc harness = {50, "mlbench", 1, 50, 5, 5, 0, 0, 2, 400, 300};
    write_proc(root, &init);
    write_proc(root, &harness);
    fake_write(root, "self/stat", "50 (mlbench) S 1 50 50 0 -1 0 0 0 0 0 5 5 0 0 20 0 2 0 400 "
                                  "1 300 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
    return root;
}

struct fixture {
    char *root;
    struct series_registry reg;
    struct sample_ctx ctx;
    void *state;
    struct sample_table tab;
    uint64_t errors;
};

/* Opens the proc source on fx->root (or the real /proc when root is NULL). */
static void fixture_open(struct fixture *fx)
{
    fx->ctx.proc_root = fx->root ? fx->root : "/proc";
    fx->ctx.ticks_per_s = fx->root ? 100 : sysconf(_SC_CLK_TCK);
    fx->ctx.page_size = fx->root ? 4096 : sysconf(_SC_PAGESIZE);
    fx->ctx.ncpu = 2;
    char err[256] = "";
    assert_int_equal(proc_source.open(&fx->reg, &fx->ctx, &fx->state, err, sizeof err), 0);
    assert_string_equal(err, "");
    sample_table_init(&fx->tab, &fx->reg);
    proc_source.run_start(fx->state);
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->root = fake_procfs();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    if (fx->state)
        proc_source.close(fx->state);
    sample_table_free(&fx->tab);
    series_registry_free(&fx->reg);
    free(fx->ctx.tree);
    fake_root_free(fx->root);
    free(fx);
    return 0;
}

static size_t tick(struct fixture *fx)
{
    size_t row = sample_table_add_row(&fx->tab, (int64_t)fx->tab.n * 100000000);
    proc_source.sample(fx->state, &fx->ctx, &fx->tab, row, &fx->errors);
    return row;
}

static double value(const struct fixture *fx, const char *name, size_t row)
{
    long s = sample_table_find(&fx->tab, name, "");
    if (s < 0) {
        print_error("series %s not registered\n", name);
        fail();
    }
    return fx->tab.v[s][row];
}

#define assert_value(fx, name, row, expected)                                                  \
    do {                                                                                       \
        double got_ = value(fx, name, row), want_ = (expected);                               \
        if (!(fabs(got_ - want_) <= TOL * fmax(1.0, fabs(want_)))) {                           \
            print_error("%s at row %zu = %.17g, expected %.17g\n", name, (size_t)(row), got_, \
                        want_);                                                                \
            fail();                                                                            \
        }                                                                                      \
    } while (0)

static bool in_tree(const struct sample_ctx *ctx, pid_t pid)
{
    for (size_t i = 0; i < ctx->n_tree; i++)
        if (ctx->tree[i] == pid)
            return true;
    return false;
}

/* Writes the processes' stat files, opens the source with the first one as the leader and takes
 * the first sample. Returns its row. */
static size_t start_with(struct fixture *fx, const struct fake_proc *procs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        write_proc(fx->root, &procs[i]);
    fixture_open(fx);
    fx->ctx.leader = procs[0].pid;
    return tick(fx);
}

static void test_registers_series(void **state)
{
    struct fixture *fx = *state;
    fixture_open(fx);
    const char *names[] = {"process_cpu_seconds_total", "process_resident_bytes",
                           "process_read_bytes_total",  "process_written_bytes_total",
                           "process_threads",           "process_count",
                           "process_io_blocked_tasks"};
    const enum series_kind kinds[] = {SERIES_COUNTER, SERIES_GAUGE, SERIES_COUNTER,
                                      SERIES_COUNTER, SERIES_GAUGE, SERIES_GAUGE,
                                      SERIES_GAUGE};
    assert_int_equal(fx->reg.n, 7);
    for (size_t i = 0; i < 7; i++) {
        long s = sample_table_find(&fx->tab, names[i], "");
        assert_true(s >= 0);
        assert_int_equal(fx->reg.defs[s].kind, kinds[i]);
        assert_string_equal(fx->reg.defs[s].source, "proc");
    }
}

static void test_open_fails_without_procfs(void **state)
{
    struct fixture *fx = *state;
    fake_remove(fx->root, "self");
    struct sample_ctx ctx = {.proc_root = fx->root, .ticks_per_s = 100, .page_size = 4096};
    char err[256] = "";
    void *st = NULL;
    assert_int_equal(proc_source.open(&fx->reg, &ctx, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "self/stat"));
    assert_int_equal(fx->reg.n, 0);

    ctx.proc_root = "/nonexistent/proc";
    assert_int_equal(proc_source.open(&fx->reg, &ctx, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/proc"));
}

/* No leader yet: nothing is written and the tree is empty. */
static void test_no_leader(void **state)
{
    struct fixture *fx = *state;
    fixture_open(fx);
    fx->ctx.n_tree = 7;
    size_t row = tick(fx);
    assert_int_equal(fx->ctx.n_tree, 0);
    for (size_t s = 0; s < fx->tab.n_series; s++)
        assert_true(isnan(fx->tab.v[s][row]));
    assert_int_equal(fx->errors, 0);
}

/* The tree: leader 100 "a) b (c)" (comm with spaces and parentheses), children 101 and 102,
 * grandchild 103 (its io file missing: it vanished between the scan and the read), 104 a
 * grandchild re-parented to mlbench (ppid 50) but still in the leader's group, 105 its child in a
 * session of its own, 106 a child of 101 in a group of its own. Not in the tree: 200 (another
 * child of mlbench), 201 (child of init), 202 (child of 200), 1 and 50. */
static void test_tree_and_values(void **state)
{
    struct fixture *fx = *state;
    const struct fake_proc procs[] = {
        /* pid comm ppid pgrp utime stime cutime cstime threads start rss_pages */
        {100, "a) b (c)", 50, 100, 300, 100, 50, 50, 4, 1000, 1000},
        {101, "worker 1", 100, 100, 120, 30, 0, 0, 2, 1010, 500},
        {102, "worker 2", 100, 100, 80, 20, 0, 0, 2, 1011, 400},
        {103, "grand)", 101, 100, 10, 0, 0, 0, 1, 1020, 100},
        {104, "orphan ) (", 50, 100, 40, 10, 0, 0, 3, 1021, 200},
        {105, "daemon", 104, 105, 5, 5, 0, 0, 1, 1030, 50},
        {106, "own group", 101, 106, 7, 3, 0, 0, 1, 1031, 60},
        {200, "other", 50, 200, 999, 999, 0, 0, 9, 900, 9999},
        {201, "cron", 1, 201, 999, 999, 0, 0, 9, 800, 9999},
        {202, "other child", 200, 200, 999, 999, 0, 0, 9, 950, 9999},
    };
    for (size_t i = 0; i < sizeof procs / sizeof *procs; i++) {
        write_proc(fx->root, &procs[i]);
        if (procs[i].pid != 103)
            write_io(fx->root, procs[i].pid, 1000u * (unsigned)procs[i].pid,
                     10u * (unsigned)procs[i].pid);
    }
    write_pss(fx->root, 100, 3000);
    write_pss(fx->root, 101, 1500);
    write_pss(fx->root, 200, 77777);
    fixture_open(fx);
    fx->ctx.leader = 100;
    size_t row = tick(fx);

    assert_int_equal(fx->ctx.n_tree, 7);
    assert_int_equal(fx->ctx.tree[0], 100);
    for (pid_t pid = 100; pid <= 106; pid++)
        assert_true(in_tree(&fx->ctx, pid));
    assert_value(fx, "process_count", row, 7);
    /* ticks: 100: 500, 101: 150, 102: 100, 103: 10, 104: 50, 105: 10, 106: 10 = 830 */
    assert_value(fx, "process_cpu_seconds_total", row, 8.30);
    /* PSS for 100 and 101 (3000 + 1500 kB), RSS for the others (400+100+200+50+60 pages) */
    assert_value(fx, "process_resident_bytes", row, 4500.0 * 1024 + 810.0 * 4096);
    /* 103 has no io: the sum of the others, 1000 * (100+101+102+104+105+106) */
    assert_value(fx, "process_read_bytes_total", row, 1000.0 * 618);
    assert_value(fx, "process_written_bytes_total", row, 10.0 * 618);
    assert_value(fx, "process_threads", row, 4 + 2 + 2 + 1 + 3 + 1 + 1);
    assert_int_equal(fx->errors, 1); /* 103/io */
}

/* Processes that appear later are found: a new grandchild, and a pid that belonged to an
 * unrelated process at the first tick and now names a child of the leader (procfs gives the
 * reused pid a new directory). The unrelated process 200 stays out. */
static void test_new_processes_found(void **state)
{
    struct fixture *fx = *state;
    const struct fake_proc procs[] = {
        {100, "leader", 50, 100, 10, 0, 0, 0, 1, 1000, 10},
        {101, "child", 100, 100, 20, 0, 0, 0, 1, 1010, 10},
        {200, "other", 1, 200, 500, 0, 0, 0, 1, 900, 10},
        {201, "old", 1, 201, 700, 0, 0, 0, 1, 901, 10},
    };
    size_t row = start_with(fx, procs, 4);
    assert_value(fx, "process_count", row, 2);
    assert_value(fx, "process_cpu_seconds_total", row, 0.30);

    const struct fake_proc grandchild = {150, "grandchild", 101, 100, 5, 0, 0, 0, 1, 1100, 10};
    const struct fake_proc reused = {201, "reused", 100, 100, 3, 0, 0, 0, 1, 1200, 10};
    write_proc(fx->root, &grandchild);
    fake_write(fx->root, "new/stat", "%s", "");
    fake_remove(fx->root, "201");
    fake_rename(fx->root, "new", "201");
    write_proc(fx->root, &reused);
    row = tick(fx);
    assert_value(fx, "process_count", row, 4);
    assert_true(in_tree(&fx->ctx, 150));
    assert_true(in_tree(&fx->ctx, 201));
    assert_false(in_tree(&fx->ctx, 200));
    assert_value(fx, "process_cpu_seconds_total", row, 0.38);
}

/* A descendant that leaves the leader's group and loses its parent (re-parented to mlbench) is
 * still the workload's: members stay in the tree while they live. */
static void test_members_stay(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc procs[] = {
        {100, "leader", 50, 100, 10, 0, 0, 0, 1, 1000, 10},
        {101, "sh", 100, 100, 1, 0, 0, 0, 1, 1010, 10},
        {102, "server", 101, 102, 40, 0, 0, 0, 4, 1020, 10},
    };
    size_t row = start_with(fx, procs, 3);
    assert_value(fx, "process_count", row, 3);
    fake_remove(fx->root, "101");
    procs[2].ppid = 50;
    write_proc(fx->root, &procs[2]);
    row = tick(fx);
    assert_value(fx, "process_count", row, 2);
    assert_true(in_tree(&fx->ctx, 102));
    assert_value(fx, "process_threads", row, 5);
}

/* A member whose stat cannot be read at one tick is looked at again at the next. */
static void test_unreadable_stat_retried(void **state)
{
    struct fixture *fx = *state;
    const struct fake_proc procs[] = {
        {100, "leader", 50, 100, 10, 0, 0, 0, 1, 1000, 10},
        {101, "child", 100, 100, 20, 0, 0, 0, 1, 1010, 10},
    };
    size_t row = start_with(fx, procs, 2);
    assert_value(fx, "process_count", row, 2);
    fake_write(fx->root, "101/stat", "%s", "101 (child");
    row = tick(fx);
    assert_value(fx, "process_count", row, 1);
    write_proc(fx->root, &procs[1]);
    row = tick(fx);
    assert_value(fx, "process_count", row, 2);
}

/* PSS is read once, then follows the RSS until the next read (at most once a second). */
static void test_pss_between_reads(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc leader = {100, "leader", 50, 100, 10, 0, 0, 0, 1, 1000, 1000};
    write_pss(fx->root, 100, 2000);
    size_t row = start_with(fx, &leader, 1);
    assert_value(fx, "process_resident_bytes", row, 2000.0 * 1024);
    leader.rss_pages = 1100;
    write_proc(fx->root, &leader);
    write_pss(fx->root, 100, 9999);
    row = tick(fx);
    assert_value(fx, "process_resident_bytes", row, 2000.0 * 1024 + 100 * 4096);
}

/* A process whose io cannot be read at all: its counters are NAN, not 0. An io path that is a
 * directory fails with EISDIR even for root, and counts an error at each tick. */
static void test_unreadable_io_is_nan(void **state)
{
    struct fixture *fx = *state;
    const struct fake_proc leader = {100, "solo", 50, 100, 10, 10, 0, 0, 1, 1000, 10};
    fake_mkdir(fx->root, "100/io");
    size_t row = start_with(fx, &leader, 1);
    assert_true(isnan(value(fx, "process_read_bytes_total", row)));
    assert_true(isnan(value(fx, "process_written_bytes_total", row)));
    assert_value(fx, "process_cpu_seconds_total", row, 0.2);
    assert_value(fx, "process_resident_bytes", row, 10 * 4096);
    row = tick(fx);
    assert_true(isnan(value(fx, "process_read_bytes_total", row)));
    assert_int_equal(fx->errors, 2);
}

/* Counters stay monotonic as processes exit, and count what reaped children did.
 * tick 0: 100 leader 100 ticks, 101 child 50, 102 child 20, 104 orphan in the group (ppid 50)
 *         30 ticks: total 200 ticks = 2.00 s; read bytes 1000 + 500 + 200 + 300 = 2000.
 * tick 1: 101 exited after 10 more ticks and 100 reaped it (100's cutime +60, read +600);
 *         104 exited and mlbench reaped it (its 30 ticks are in no tree member: kept as lost);
 *         102 did 5 more ticks. Alive: 100: 160, 102: 25 = 185, + lost 30 = 215 = 2.15 s.
 *         read: 100: 1600, 102: 200 = 1800 + lost 300 = 2100.
 * tick 2: 102 exited and 100 reaped it without accounting (SIGCHLD ignored): the sum 160 + 30
 *         would fall to 1.90: the counter stays at 2.15.
 * tick 3: 100 did 10 more ticks: 2.25. */
static void test_counters_monotonic(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc procs[] = {
        {100, "python train.py", 50, 100, 60, 40, 0, 0, 8, 1000, 1000},
        {101, "loader", 100, 100, 40, 10, 0, 0, 1, 1010, 100},
        {102, "loader 2", 100, 100, 15, 5, 0, 0, 1, 1011, 100},
        {104, "orphan", 50, 100, 20, 10, 0, 0, 1, 1012, 100},
    };
    struct fake_proc *leader = &procs[0], *child2 = &procs[2];
    write_io(fx->root, 100, 1000, 100);
    write_io(fx->root, 101, 500, 50);
    write_io(fx->root, 102, 200, 20);
    write_io(fx->root, 104, 300, 30);
    size_t row = start_with(fx, procs, 4);
    assert_value(fx, "process_cpu_seconds_total", row, 2.00);
    assert_value(fx, "process_read_bytes_total", row, 2000);
    assert_value(fx, "process_written_bytes_total", row, 200);
    assert_value(fx, "process_count", row, 4);

    fake_remove(fx->root, "101");
    fake_remove(fx->root, "104");
    leader->cutime = 60;
    child2->utime = 20;
    write_proc(fx->root, leader);
    write_proc(fx->root, child2);
    write_io(fx->root, 100, 1600, 160);
    row = tick(fx);
    assert_value(fx, "process_cpu_seconds_total", row, 2.15);
    assert_value(fx, "process_read_bytes_total", row, 2100);
    assert_value(fx, "process_written_bytes_total", row, 210);
    assert_value(fx, "process_count", row, 2);

    fake_remove(fx->root, "102");
    row = tick(fx);
    assert_value(fx, "process_cpu_seconds_total", row, 2.15);
    assert_value(fx, "process_read_bytes_total", row, 2100);

    leader->utime = 70;
    write_proc(fx->root, leader);
    row = tick(fx);
    assert_value(fx, "process_cpu_seconds_total", row, 2.25);
    assert_int_equal(fx->errors, 0);

    /* A new run starts from the tree's own totals again. */
    proc_source.run_start(fx->state);
    row = tick(fx);
    assert_value(fx, "process_cpu_seconds_total", row, 1.70);
    assert_value(fx, "process_read_bytes_total", row, 1600);
}

static void write_schedstat(const char *root, int pid, int tid, unsigned long long wait_ns)
{
    char rel[64];
    snprintf(rel, sizeof rel, "%d/task/%d/schedstat", pid, tid);
    fake_write(root, rel, "%llu %llu 42\n", 5000000000ull, wait_ns);
}

/* process_cpu_wait_seconds_total: the run-queue wait (second field of task/TID/schedstat)
 * summed over every thread of every member; registered only where self/schedstat exists; kept
 * monotonic when a thread exits, and a child's wait is kept when a tree member reaps it (the
 * kernel passes on CPU time to the reaper, never the wait). Issue 13. */
static void test_cpu_wait(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc procs[] = {
        {100, "python", 50, 100, 60, 40, 0, 0, 2, 1000, 1000},
        {101, "loader", 100, 100, 40, 10, 0, 0, 1, 1010, 100},
    };
    fake_write(fx->root, "self/schedstat", "1000 2000 3\n");
    write_io(fx->root, 100, 1000, 100);
    write_io(fx->root, 101, 500, 50);
    write_schedstat(fx->root, 100, 100, 1000000000ull);
    write_schedstat(fx->root, 100, 110, 500000000ull);
    /* the loader has one thread: read through 101/schedstat, its main thread's */
    fake_write(fx->root, "101/schedstat", "%llu %llu 7\n", 1000ull, 250000000ull);
    size_t row = start_with(fx, procs, 2);
    long s = sample_table_find(&fx->tab, "process_cpu_wait_seconds_total", "");
    assert_true(s >= 0);
    assert_int_equal(fx->reg.defs[s].kind, SERIES_COUNTER);
    assert_value(fx, "process_cpu_wait_seconds_total", row, 1.75);

    /* thread 110 exits while 100 waits 0.1 s more: the sum falls, the counter does not */
    fake_remove(fx->root, "100/task/110");
    write_schedstat(fx->root, 100, 100, 1100000000ull);
    row = tick(fx);
    assert_value(fx, "process_cpu_wait_seconds_total", row, 1.75);
    write_schedstat(fx->root, 100, 100, 1300000000ull);
    row = tick(fx);
    assert_value(fx, "process_cpu_wait_seconds_total", row, 1.95);

    /* the loader exits and its parent (in the tree) reaps it: its 0.25 s stay counted */
    fake_remove(fx->root, "101");
    procs[0].cutime = 50;
    write_proc(fx->root, &procs[0]);
    row = tick(fx);
    assert_value(fx, "process_cpu_wait_seconds_total", row, 1.95);
    assert_value(fx, "process_cpu_seconds_total", row, 1.50);
    assert_int_equal(fx->errors, 0);

    /* a member whose threads cannot be read: an error, the counter holds */
    fake_remove(fx->root, "100/task");
    row = tick(fx);
    assert_int_equal(fx->errors, 1);
}

/* The workload's own I/O waits (issue 35): process_io_blocked_tasks counts the members in state D
 * at a tick; process_io_wait_seconds_total sums their stat field 42 (block I/O delay, clock
 * ticks) and exists only where sys/kernel/task_delayacct is 1 at open; a member that exits
 * takes its delay with it (no reaper inherits it) and the counter holds. */
static void test_io_wait(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc procs[] = {
        {100, "python", 50, 100, 60, 40, 0, 0, 2, 1000, 1000},
        {101, "loader", 100, 100, 40, 10, 0, 0, 1, 1010, 100},
        {102, "idle", 100, 100, 0, 0, 0, 0, 1, 1020, 100},
    };
    fake_write(fx->root, "sys/kernel/task_delayacct", "1\n");
    for (int pid = 100; pid <= 102; pid++)
        write_io(fx->root, pid, 0, 0);
    write_proc_waiting(fx->root, &procs[0], 'D', 150);
    write_proc_waiting(fx->root, &procs[1], 'D', 50);
    write_proc(fx->root, &procs[2]);
    fixture_open(fx);
    fx->ctx.leader = 100;
    size_t row = tick(fx);
    long s = sample_table_find(&fx->tab, "process_io_wait_seconds_total", "");
    assert_true(s >= 0);
    assert_int_equal(fx->reg.defs[s].kind, SERIES_COUNTER);
    assert_value(fx, "process_io_wait_seconds_total", row, 2.0);
    assert_value(fx, "process_io_blocked_tasks", row, 2);

    /* the loader exits, reaped by its parent in the tree: its 0.5 s stay; python waits 1 s more */
    fake_remove(fx->root, "101");
    write_proc_waiting(fx->root, &procs[0], 'R', 250);
    row = tick(fx);
    assert_value(fx, "process_io_wait_seconds_total", row, 3.0);
    assert_value(fx, "process_io_blocked_tasks", row, 0);
    assert_int_equal(fx->errors, 0);
}

/* Delay accounting off (kernel.task_delayacct 0, the default): the blocked count only. */
static void test_io_wait_off(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc python = {100, "python", 50, 100, 60, 40, 0, 0, 1, 1000, 1000};
    fake_write(fx->root, "sys/kernel/task_delayacct", "0\n");
    write_proc_waiting(fx->root, &python, 'D', 0);
    fixture_open(fx);
    fx->ctx.leader = 100;
    size_t row = tick(fx);
    assert_true(sample_table_find(&fx->tab, "process_io_wait_seconds_total", "") < 0);
    assert_value(fx, "process_io_blocked_tasks", row, 1);
}

/* Without self/schedstat (a kernel without CONFIG_SCHED_INFO) the series does not exist. */
static void test_cpu_wait_absent(void **state)
{
    struct fixture *fx = *state;
    fixture_open(fx);
    assert_true(sample_table_find(&fx->tab, "process_cpu_wait_seconds_total", "") < 0);
}

/* A pid reused by a new process (another starttime) is a new member: the old one's totals were
 * carried by its parent, the new one's are counted from its start. */
static void test_pid_reuse(void **state)
{
    struct fixture *fx = *state;
    struct fake_proc procs[] = {
        {100, "leader", 50, 100, 100, 0, 0, 0, 1, 1000, 10},
        {101, "first", 100, 100, 50, 0, 0, 0, 1, 1010, 10},
    };
    size_t row = start_with(fx, procs, 2);
    assert_value(fx, "process_cpu_seconds_total", row, 1.50);
    /* 101 exited after 50 ticks and was reaped by 100; a new 101 ran for 5 ticks. */
    procs[0].cutime = 50;
    procs[1] = (struct fake_proc){101, "second", 100, 100, 5, 0, 0, 0, 1, 2000, 10};
    write_proc(fx->root, &procs[0]);
    write_proc(fx->root, &procs[1]);
    row = tick(fx);
    assert_value(fx, "process_cpu_seconds_total", row, 1.55);
}

/* The leader gone and reaped, no one left: count 0, every other value NAN (not measured). */
static void test_empty_tree(void **state)
{
    struct fixture *fx = *state;
    const struct fake_proc leader = {100, "leader", 50, 100, 100, 0, 0, 0, 1, 1000, 10};
    write_io(fx->root, 100, 10, 10);
    start_with(fx, &leader, 1);
    fake_remove(fx->root, "100");
    size_t row = tick(fx);
    assert_int_equal(fx->ctx.n_tree, 0);
    assert_value(fx, "process_count", row, 0);
    assert_true(isnan(value(fx, "process_cpu_seconds_total", row)));
    assert_true(isnan(value(fx, "process_resident_bytes", row)));
    assert_true(isnan(value(fx, "process_read_bytes_total", row)));
    assert_true(isnan(value(fx, "process_threads", row)));
    assert_int_equal(fx->errors, 0);
}

/* Malformed stat lines are skipped, not trusted; numbers too large saturate (300, outside). */
static void test_malformed_stat(void **state)
{
    struct fixture *fx = *state;
    const struct fake_proc leader = {100, "leader", 50, 100, 100, 0, 0, 0, 1, 1000, 10};
    fake_write(fx->root, "101/stat", "101 (truncated) S 100 100 1");
    fake_write(fx->root, "102/stat", "102 no parentheses S 100 100 1 2 3 4 5 6 7 8 9 0");
    fake_write(fx->root, "103/stat", "%s", "");
    fake_write(fx->root, "300/stat", "%s",
               "300 (huge) S 1 300 300 0 -1 0 0 0 0 0 99999999999999999999999 "
               "-99999999999999999999999 99999999999999999999999 99999999999999999999999 20 0 1 "
               "0 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
    size_t row = start_with(fx, &leader, 1);
    assert_value(fx, "process_count", row, 1);
    assert_value(fx, "process_cpu_seconds_total", row, 1.0);
}

/* Spins for `seconds` of CPU time; returns a sum the compiler cannot drop. */
static double burn_cpu(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    double x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += i * 0.5;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
    return x;
}

/* The real /proc, this test program as the leader, with 50 children blocked on a pipe. */
static void test_real_proc(void **state)
{
    struct fixture *fx = *state;
    fake_root_free(fx->root);
    fx->root = NULL;
    assert_true(burn_cpu(0.05) > 0); /* a few clock ticks of CPU time */
    fixture_open(fx);
    fx->ctx.leader = getpid();
    size_t row = tick(fx);
    assert_true(fx->ctx.n_tree >= 1);
    assert_int_equal(fx->ctx.tree[0], getpid());
    double cpu = value(fx, "process_cpu_seconds_total", row);
    assert_true(isfinite(cpu) && cpu > 0);
    double rss = value(fx, "process_resident_bytes", row);
    assert_true(isfinite(rss) && rss > 0 && rss < 64e9);
    assert_true(value(fx, "process_count", row) >= 1);
    assert_true(value(fx, "process_threads", row) >= 1);
    assert_true(isfinite(value(fx, "process_read_bytes_total", row)));
    assert_true(isfinite(value(fx, "process_written_bytes_total", row)));

    enum { N_CHILDREN = 50, N_TICKS = 100 };
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    pid_t kids[N_CHILDREN];
    for (int i = 0; i < N_CHILDREN; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            char c;
            close(gate[1]);
            _exit(read(gate[0], &c, 1) < 0);
        }
    }
    close(gate[0]);
    row = tick(fx);
    for (int i = 0; i < N_CHILDREN; i++)
        assert_true(in_tree(&fx->ctx, kids[i]));
    assert_true(value(fx, "process_count", row) >= N_CHILDREN + 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < N_TICKS; i++)
        tick(fx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                N_TICKS / 1e3;
    print_message("proc sample() with %zu processes in the tree: %.0f us\n", fx->ctx.n_tree, us);
    double before = value(fx, "process_cpu_seconds_total", fx->tab.n - 1);
    close(gate[1]);
    for (int i = 0; i < N_CHILDREN; i++)
        assert_int_equal(waitpid(kids[i], NULL, 0), kids[i]);
    row = tick(fx);
    assert_true(value(fx, "process_cpu_seconds_total", row) >= before);
    assert_true(value(fx, "process_count", row) >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registers_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_fails_without_procfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_leader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_processes_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_members_stay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_stat_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pss_between_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_io_is_nan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters_monotonic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_wait_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_wait_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_stat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_proc, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
