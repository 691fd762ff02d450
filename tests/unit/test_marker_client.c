/* Unit tests of the C marker client (lib/marker) with the socket set: binds a Unix datagram
 * socket, sets MLBENCH_MARKER_SOCKET before the first API call, and checks the exact text of
 * each event, the pid and tid fields (threads, forked children), and argument checking. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlbench/marker.h"

static char g_dir[64];
static char g_path[128];
static int g_rx = -1;

struct event {
    char kind;
    unsigned long long t_ns;
    long pid;
    long tid;
    char body[MLBENCH_MARKER_MAX_EVENT + 1]; /* after "<kind> <t_ns> <pid> <tid> " */
    size_t len;                              /* of the whole datagram */
};

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static long my_tid(void)
{
    return (long)syscall(SYS_gettid);
}

/* Parses a decimal field ending with a space; returns the position after the space. */
static const char *parse_number(const char *p, unsigned long long *out)
{
    assert_true(*p >= '0' && *p <= '9');
    char *end;
    errno = 0;
    *out = strtoull(p, &end, 10);
    assert_int_equal(errno, 0);
    assert_true(*end == ' ');
    return end + 1;
}

/* Receives the next event (fails after 5 s) and splits its header. */
static void recv_event(struct event *ev)
{
    char buf[2 * MLBENCH_MARKER_MAX_EVENT]; /* larger than the limit, to see oversized ones */
    ssize_t n = recv(g_rx, buf, sizeof buf - 1, 0);
    assert_true(n > 0);
    assert_true((size_t)n <= MLBENCH_MARKER_MAX_EVENT);
    buf[n] = '\0';
    assert_int_equal(strlen(buf), (size_t)n); /* no NUL inside */
    ev->len = (size_t)n;
    ev->kind = buf[0];
    assert_true(buf[1] == ' ');
    unsigned long long pid, tid;
    const char *p = parse_number(buf + 2, &ev->t_ns);
    p = parse_number(p, &pid);
    p = parse_number(p, &tid);
    ev->pid = (long)pid;
    ev->tid = (long)tid;
    strcpy(ev->body, p);
}

/* Asserts the next event is `kind body` from this thread, sent within [t0, now]. */
static void expect_event(char kind, const char *body, unsigned long long t0)
{
    struct event ev;
    recv_event(&ev);
    unsigned long long t1 = now_ns();
    assert_int_equal(ev.kind, kind);
    assert_string_equal(ev.body, body);
    assert_int_equal(ev.pid, (long)getpid());
    assert_int_equal(ev.tid, my_tid());
    assert_true(ev.t_ns >= t0 && ev.t_ns <= t1);
}

static void assert_queue_empty(void)
{
    char buf[16];
    ssize_t n = recv(g_rx, buf, sizeof buf, MSG_DONTWAIT);
    assert_true(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

static int group_setup(void **state)
{
    (void)state;
    strcpy(g_dir, "/tmp/mlbench-marker-test-XXXXXX");
    if (mkdtemp(g_dir) == NULL)
        return -1;
    snprintf(g_path, sizeof g_path, "%s/marker.sock", g_dir);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, g_path);
    g_rx = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (g_rx < 0 || bind(g_rx, (const struct sockaddr *)&addr, sizeof addr) != 0)
        return -1;
    struct timeval timeout = {.tv_sec = 5};
    setsockopt(g_rx, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    /* Before the first API call: the client reads the variable once. */
    return setenv("MLBENCH_MARKER_SOCKET", g_path, 1);
}

static int group_teardown(void **state)
{
    (void)state;
    close(g_rx);
    unlink(g_path);
    rmdir(g_dir);
    return 0;
}

static void test_enabled(void **state)
{
    (void)state;
    assert_int_equal(mlb_enabled(), 1);
}

static void test_stage_and_instant(void **state)
{
    (void)state;
    unsigned long long t0 = now_ns();
    assert_int_equal(mlb_stage_begin("load"), 0);
    expect_event('B', "load", t0);
    assert_int_equal(mlb_stage_end("load"), 0);
    expect_event('E', "load", t0);
    assert_int_equal(mlb_instant("checkpoint"), 0);
    expect_event('I', "checkpoint", t0);
    assert_int_equal(mlb_instant("\xc3\xa9t\xc3\xa9"), 0); /* UTF-8 "été" */
    expect_event('I', "\xc3\xa9t\xc3\xa9", t0);
}

static void test_counter_round_trips(void **state)
{
    (void)state;
    const double values[] = {0.1, 3, -2.5, 1.0 / 3.0, 1e300, 5e-324, -0.0, 123456789012345678.0};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        unsigned long long t0 = now_ns();
        assert_int_equal(mlb_counter("loss", values[i]), 0);
        struct event ev;
        recv_event(&ev);
        assert_int_equal(ev.kind, 'C');
        assert_int_equal(ev.pid, (long)getpid());
        assert_true(ev.t_ns >= t0);
        assert_memory_equal(ev.body, "loss ", 5);
        char *end;
        double back = strtod(ev.body + 5, &end);
        assert_true(*end == '\0');
        assert_memory_equal(&back, &values[i], sizeof back); /* bit-exact, sign of zero too */
    }
    unsigned long long t0 = now_ns();
    assert_int_equal(mlb_counter("x", NAN), 0);
    expect_event('C', "x nan", t0);
    assert_int_equal(mlb_counter("x", -NAN), 0);
    expect_event('C', "x nan", t0);
    assert_int_equal(mlb_counter("x", INFINITY), 0);
    expect_event('C', "x inf", t0);
    assert_int_equal(mlb_counter("x", -INFINITY), 0);
    expect_event('C', "x -inf", t0);
    assert_int_equal(mlb_counter("images", 32), 0);
    expect_event('C', "images 32", t0);
}

static void test_meta(void **state)
{
    (void)state;
    unsigned long long t0 = now_ns();
    assert_int_equal(mlb_meta("model", "resnet 50  v1 "), 0);
    expect_event('M', "model resnet 50  v1 ", t0);
    assert_int_equal(mlb_meta("empty", ""), 0);
    expect_event('M', "empty", t0); /* an empty value is sent as the key alone */
    assert_int_equal(mlb_meta("device", "cpu"), 0);
    expect_event('M', "device cpu", t0);
}

/* Reads the file that stderr was redirected to. */
static void read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    static char long_name[MLBENCH_MARKER_MAX_EVENT + 1];
    memset(long_name, 'n', sizeof long_name - 1);
    static char long_value[MLBENCH_MARKER_MAX_EVENT];
    memset(long_value, 'v', sizeof long_value - 1);

    /* stderr goes to a file: the first error, and only it, is reported there. */
    char err_path[192];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", g_dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);

    const char *bad[] = {"a b", "", "a\tb", "a\nb", "x\x01", "x\x7f", long_name, NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        assert_int_equal(mlb_stage_begin(bad[i]), -1);
        assert_int_equal(errno, EINVAL);
        errno = 0;
        assert_int_equal(mlb_stage_end(bad[i]), -1);
        assert_int_equal(errno, EINVAL);
        errno = 0;
        assert_int_equal(mlb_instant(bad[i]), -1);
        assert_int_equal(errno, EINVAL);
        errno = 0;
        assert_int_equal(mlb_counter(bad[i], 1.0), -1);
        assert_int_equal(errno, EINVAL);
        errno = 0;
        assert_int_equal(mlb_meta(bad[i], "v"), -1);
        assert_int_equal(errno, EINVAL);
    }
    errno = 0;
    assert_int_equal(mlb_meta("k", NULL), -1);
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_int_equal(mlb_meta("k", "line\nbreak"), -1);
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_int_equal(mlb_meta("k", long_value), -1); /* 4095 bytes + header > 4096 */
    assert_int_equal(errno, EINVAL);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[1024];
    read_file(err_path, text, sizeof text);
    unlink(err_path);
    assert_non_null(strstr(text, "\"a b\""));
    assert_non_null(strchr(text, '\n'));
    assert_string_equal(strchr(text, '\n') + 1, ""); /* one line only */

    assert_queue_empty(); /* nothing invalid was sent */

    /* A long name that fits is sent whole; the event may be exactly the limit. */
    unsigned long long t0 = now_ns();
    long_name[4000] = '\0';
    assert_int_equal(mlb_instant(long_name), 0);
    expect_event('I', long_name, t0);
    long_name[4000] = 'n';

    struct event ev;
    assert_int_equal(mlb_instant("probe"), 0);
    recv_event(&ev);
    size_t header = ev.len - strlen("probe");
    long_name[MLBENCH_MARKER_MAX_EVENT - header] = '\0';
    assert_int_equal(mlb_instant(long_name), 0);
    recv_event(&ev);
    /* Same thread, so same header length (t_ns only gains a digit at a power of ten). */
    assert_int_equal(ev.len, MLBENCH_MARKER_MAX_EVENT);
    long_name[MLBENCH_MARKER_MAX_EVENT - header] = 'n';
    long_name[MLBENCH_MARKER_MAX_EVENT - header + 1] = '\0';
    errno = 0;
    assert_int_equal(mlb_instant(long_name), -1); /* one byte over */
    assert_int_equal(errno, EINVAL);
    assert_queue_empty();
}

/* cmocka asserts only on the main thread: helper threads report through these fields. */
struct thread_arg {
    pthread_barrier_t *barrier;
    long tid;
    int rc; /* of mlb_instant */
};

static void *thread_main(void *p)
{
    struct thread_arg *arg = p;
    pthread_barrier_wait(arg->barrier); /* both threads alive at once: distinct ids */
    arg->tid = my_tid();
    arg->rc = mlb_instant("thread");
    pthread_barrier_wait(arg->barrier);
    return NULL;
}

static void test_threads_have_distinct_tids(void **state)
{
    (void)state;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct thread_arg args[2] = {{&barrier, 0, -1}, {&barrier, 0, -1}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, thread_main, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&barrier);
    assert_int_equal(args[0].rc, 0);
    assert_int_equal(args[1].rc, 0);

    long seen[2];
    for (int i = 0; i < 2; i++) {
        struct event ev;
        recv_event(&ev);
        assert_int_equal(ev.kind, 'I');
        assert_string_equal(ev.body, "thread");
        assert_int_equal(ev.pid, (long)getpid());
        seen[i] = ev.tid;
    }
    assert_true(args[0].tid != args[1].tid);
    assert_true((seen[0] == args[0].tid && seen[1] == args[1].tid) ||
                (seen[0] == args[1].tid && seen[1] == args[0].tid));
    assert_true(seen[0] != my_tid() && seen[1] != my_tid());
}

/* Forks; the child sends one instant event `name` and exits 0 when mlb_instant succeeded.
 * Returns the child's pid once it exited with 0, else -1. No cmocka asserts: it also runs on
 * a helper thread. */
static pid_t fork_and_mark(const char *name)
{
    pid_t child = fork();
    if (child < 0)
        return -1;
    if (child == 0)
        _exit(mlb_instant(name) == 0 ? 0 : 1);
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return child;
}

static void test_fork_child_has_its_pid_and_tid(void **state)
{
    (void)state;
    unsigned long long t0 = now_ns();
    assert_int_equal(mlb_instant("parent"), 0); /* caches this thread's pid and tid */
    expect_event('I', "parent", t0);

    pid_t child = fork_and_mark("child");
    assert_true(child > 0);
    struct event ev;
    recv_event(&ev);
    assert_string_equal(ev.body, "child");
    assert_int_equal(ev.pid, (long)child);
    assert_int_equal(ev.tid, (long)child); /* the forking thread is the child's main thread */

    assert_int_equal(mlb_instant("parent_again"), 0);
    expect_event('I', "parent_again", t0);
}

static void *fork_from_thread(void *p)
{
    pid_t *child = p;
    if (mlb_instant("worker") != 0) /* caches the worker thread's tid */
        return NULL;
    *child = fork_and_mark("worker_child");
    return NULL;
}

static void test_fork_from_a_thread(void **state)
{
    (void)state;
    pthread_t thread;
    pid_t child = 0;
    assert_int_equal(pthread_create(&thread, NULL, fork_from_thread, &child), 0);
    pthread_join(thread, NULL);
    assert_true(child > 0);

    struct event ev;
    recv_event(&ev);
    assert_string_equal(ev.body, "worker");
    long worker_tid = ev.tid;
    recv_event(&ev);
    assert_string_equal(ev.body, "worker_child");
    assert_int_equal(ev.pid, (long)child);
    assert_int_equal(ev.tid, (long)child);
    assert_true(ev.tid != worker_tid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enabled),
        cmocka_unit_test(test_stage_and_instant),
        cmocka_unit_test(test_counter_round_trips),
        cmocka_unit_test(test_meta),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_threads_have_distinct_tids),
        cmocka_unit_test(test_fork_child_has_its_pid_and_tid),
        cmocka_unit_test(test_fork_from_a_thread),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
