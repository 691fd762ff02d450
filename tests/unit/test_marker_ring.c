/* Unit tests of the C marker client's ring writer (lib/marker/marker_ring.c): plays mlbench's
 * part by hand (binds the socket, offers rings with MLBENCH_MARKER_RING=1, receives the rings'
 * descriptors) and checks the layout of include/mlbench/marker_ring.h: the header, every
 * record, names announced before their first use, a ring per thread and per forked process,
 * long names as datagrams, bad names refused, and a full ring counting its drops. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlbench/marker.h"
#include "mlbench/marker_ring.h"

#define RING_BYTES 4096 /* 128 records: small enough to fill */

static char g_dir[64], g_path[128];
static int g_rx = -1;

struct datagram {
    char text[MLBENCH_MARKER_MAX_EVENT + 1];
    int fd; /* carried descriptor, or -1 */
};

/* The next datagram (waits at most 2 s); returns 0 when none came. */
static int receive(struct datagram *d)
{
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = d->text, .iov_len = sizeof d->text - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes,
                         .msg_controllen = sizeof ctl.bytes};
    struct timeval tv = {2, 0};
    setsockopt(g_rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n = recvmsg(g_rx, &msg, 0);
    if (n < 0)
        return 0;
    d->text[n] = '\0';
    d->fd = -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c && c->cmsg_type == SCM_RIGHTS)
        memcpy(&d->fd, CMSG_DATA(c), sizeof d->fd);
    return 1;
}

struct ring {
    struct mlb_ring_header *h;
    struct mlb_ring_record *rec;
};

/* Receives datagrams until a ring announcement; maps its descriptor. Names announced on the
 * way are kept in names[id] (up to 16). */
static struct ring next_ring(char names[16][64])
{
    struct datagram d;
    for (;;) {
        assert_true(receive(&d));
        unsigned id;
        char name[64];
        if (sscanf(d.text, "M %*s %*s %*s mlbench.name %u %63s", &id, name) == 2 && id < 16)
            strcpy(names[id], name);
        if (strstr(d.text, " mlbench.ring ")) {
            assert_true(d.fd >= 0);
            struct stat st;
            assert_int_equal(fstat(d.fd, &st), 0);
            assert_int_equal(st.st_size, MLB_RING_HEADER_BYTES + RING_BYTES);
            assert_true(fcntl(d.fd, F_GET_SEALS) & F_SEAL_SHRINK);
            void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, d.fd,
                             0);
            assert_true(map != MAP_FAILED);
            close(d.fd);
            struct ring r = {map, (struct mlb_ring_record *)((char *)map + MLB_RING_HEADER_BYTES)};
            assert_memory_equal(r.h->magic, MLB_RING_MAGIC, 8);
            assert_int_equal(r.h->version, MLB_RING_VERSION);
            assert_int_equal(r.h->record_bytes, MLB_RING_RECORD_BYTES);
            assert_int_equal(r.h->capacity, RING_BYTES / MLB_RING_RECORD_BYTES);
            return r;
        }
        assert_int_equal(d.fd, -1);
    }
}

static int setup(void **state)
{
    (void)state;
    strcpy(g_dir, "/tmp/mlbench-ring-test-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    snprintf(g_path, sizeof g_path, "%s/marker.sock", g_dir);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, g_path);
    g_rx = socket(AF_UNIX, SOCK_DGRAM, 0);
    assert_int_equal(bind(g_rx, (struct sockaddr *)&a, sizeof a), 0);
    setenv(MLBENCH_MARKER_SOCKET_ENV, g_path, 1);
    setenv(MLBENCH_MARKER_RING_ENV, "1", 1);
    setenv(MLBENCH_MARKER_RING_BYTES_ENV, "4096", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    close(g_rx);
    unlink(g_path);
    rmdir(g_dir);
    return 0;
}

/* Runs first: the process's first ring. */
static void test_records_and_names(void **state)
{
    (void)state;
    assert_int_equal(mlb_meta("batch_size", "64"), 0);
    assert_int_equal(mlb_stage_begin("train"), 0);
    assert_int_equal(mlb_counter("loss", 0.25), 0);
    assert_int_equal(mlb_instant("checkpoint"), 0);
    assert_int_equal(mlb_stage_end("train"), 0);
    /* The metadata is a datagram, before the ring. */
    struct datagram d;
    assert_true(receive(&d));
    assert_non_null(strstr(d.text, " batch_size 64"));
    char names[16][64] = {{0}};
    struct ring r = next_ring(names);
    assert_int_equal(r.h->pid, getpid());
    assert_int_equal(r.h->tid, (int32_t)syscall(SYS_gettid));
    /* Names follow the ring's announcement; all are queued before the records are read. */
    for (int i = 0; i < 3; i++) {
        assert_true(receive(&d));
        unsigned id;
        char name[64];
        assert_int_equal(sscanf(d.text, "M %*s %*s %*s mlbench.name %u %63s", &id, name), 2);
        strcpy(names[id], name);
    }
    assert_int_equal(r.h->head, 4);
    assert_int_equal(r.h->begun, 4);
    assert_int_equal(r.h->dropped, 0);
    const char kinds[] = "BCIE", *want[] = {"train", "loss", "checkpoint", "train"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r.rec[i].kind, kinds[i]);
        assert_string_equal(names[r.rec[i].name], want[i]);
        assert_true(r.rec[i].t_ns > 0);
        if (i)
            assert_true(r.rec[i].t_ns >= r.rec[i - 1].t_ns);
    }
    assert_true(r.rec[1].value == 0.25);
    assert_int_equal(r.rec[0].name, r.rec[3].name); /* interned once */

    /* A full ring drops and counts; the writer never waits. 124 more fit. */
    for (int i = 0; i < 200; i++)
        assert_int_equal(mlb_stage_begin("train"), 0);
    assert_int_equal(r.h->head, 128);
    assert_int_equal(r.h->dropped, 76);
    r.h->tail = 128; /* read: room again */
    assert_int_equal(mlb_instant("checkpoint"), 0);
    assert_int_equal(r.h->head, 129);
    assert_int_equal(r.rec[0].kind, 'I');
    munmap(r.h, MLB_RING_HEADER_BYTES + RING_BYTES);
}

static void test_bad_and_long_names(void **state)
{
    (void)state;
    errno = 0;
    assert_int_equal(mlb_stage_begin("two words"), -1);
    assert_int_equal(errno, EINVAL);
    /* Valid but too long for a ring's announcement: a datagram, as on the datagram transport. */
    char name[4040];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    assert_int_equal(mlb_stage_begin(name), 0);
    struct datagram d;
    assert_true(receive(&d));
    assert_true(d.text[0] == 'B' && strstr(d.text, " xxxx") != NULL);
    assert_int_equal(d.fd, -1);
}

static void *thread_main(void *arg)
{
    (void)arg;
    mlb_stage_begin("worker");
    mlb_stage_end("worker");
    return (void *)(intptr_t)syscall(SYS_gettid);
}

static void test_thread_gets_its_own_ring(void **state)
{
    (void)state;
    pthread_t t;
    void *tid;
    pthread_create(&t, NULL, thread_main, NULL);
    pthread_join(t, &tid);
    char names[16][64] = {{0}};
    struct ring r = next_ring(names);
    assert_int_equal(r.h->pid, getpid());
    assert_int_equal(r.h->tid, (int32_t)(intptr_t)tid);
    /* The thread has ended; what it wrote is there. */
    assert_int_equal(r.h->head, 2);
    struct datagram d;
    assert_true(receive(&d)); /* its name, new to the process */
    assert_non_null(strstr(d.text, " mlbench.name "));
    assert_non_null(strstr(d.text, " worker"));
    munmap(r.h, MLB_RING_HEADER_BYTES + RING_BYTES);
}

static void test_forked_child_gets_its_own_ring_and_names(void **state)
{
    (void)state;
    pid_t child = fork();
    if (child == 0) {
        mlb_stage_begin("train"); /* known to the parent, new to the child */
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char names[16][64] = {{0}};
    struct ring r = next_ring(names);
    assert_int_equal(r.h->pid, child);
    assert_int_equal(r.h->head, 1);
    struct datagram d;
    assert_true(receive(&d));
    unsigned id;
    char name[64];
    assert_int_equal(sscanf(d.text, "M %*s %ld %*s mlbench.name %u %63s", &(long){0}, &id, name),
                     3);
    assert_string_equal(name, "train");
    assert_int_equal(id, 1); /* the child's own ids start again */
    assert_int_equal(r.rec[0].name, 1);
    munmap(r.h, MLB_RING_HEADER_BYTES + RING_BYTES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_and_names),
        cmocka_unit_test(test_bad_and_long_names),
        cmocka_unit_test(test_thread_gets_its_own_ring),
        cmocka_unit_test(test_forked_child_gets_its_own_ring_and_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
