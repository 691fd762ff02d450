/* marker-cost: what one marker event costs a C workload (bench/marker-cost.sh runs it).
 *
 * With MLBENCH_MARKER_SOCKET set (under `mlbench run`, on the transport it offers), times
 * 50 000 mlb_stage_begin/end pairs (fewer records than a default ring holds, so that none is
 * dropped whatever the receiver does) in chunks of 5 000 and prints `c_enabled_ns_per_event N`
 * (the median chunk's) and `c_enabled_mean_ns_per_event N` (over all): the end-to-end cost seen
 * by the workload, blocking included when a datagram receiver falls behind.
 * With --self-receive, binds its own socket first and drains it in a thread (no mlbench needed;
 * the thread only counts datagrams, so it is a faster receiver than the harness).
 * With the variable unset, times 10^7 calls and prints `c_disabled_ns_per_call N`.
 *
 * Usage: marker-cost [--self-receive] [--pairs N] [--calls N]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mlbench/marker.h"

#define WARMUP_PAIRS 1000
#define CHUNK_PAIRS 5000

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct receiver {
    int fd;
    char dir[64];
    char path[128];
    pthread_t thread;
    unsigned long long events; /* received before the stop event */
};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Counts datagrams until the instant event that marks the end. */
static void *drain(void *p)
{
    struct receiver *rx = p;
    char buf[MLBENCH_MARKER_MAX_EVENT + 1];
    for (;;) {
        ssize_t n = recv(rx->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || buf[0] == 'I')
            return NULL;
        rx->events++;
    }
}

/* Binds a socket in a fresh temporary folder, exports its path, starts the drain thread. */
static int receiver_start(struct receiver *rx)
{
    strcpy(rx->dir, "/tmp/mlbench-marker-cost-XXXXXX");
    if (mkdtemp(rx->dir) == NULL) {
        fprintf(stderr, "marker-cost: cannot create a folder in /tmp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(rx->path, sizeof rx->path, "%s/marker.sock", rx->dir);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, rx->path);
    rx->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (rx->fd < 0 || bind(rx->fd, (const struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr, "marker-cost: cannot bind %s: %s\n", rx->path, strerror(errno));
        return -1;
    }
    setenv("MLBENCH_MARKER_SOCKET", rx->path, 1);
    return pthread_create(&rx->thread, NULL, drain, rx) == 0 ? 0 : -1;
}

static void receiver_stop(struct receiver *rx)
{
    mlb_instant("marker_cost_done");
    pthread_join(rx->thread, NULL);
    close(rx->fd);
    unlink(rx->path);
    rmdir(rx->dir);
}

static long parse_count(const char *option, const char *text)
{
    char *end;
    errno = 0;
    long v = text != NULL ? strtol(text, &end, 10) : 0;
    if (text == NULL || *end != '\0' || errno != 0 || v < 1 || v > 1000000000) {
        fprintf(stderr, "marker-cost: invalid %s value '%s': expected an integer from 1 to "
                        "1000000000\n", option, text != NULL ? text : "");
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int self_receive = 0;
    long pairs = 50000, calls = 10000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--self-receive") == 0) {
            self_receive = 1;
        } else if (strcmp(argv[i], "--pairs") == 0) {
            pairs = parse_count("--pairs", argv[++i]);
        } else if (strcmp(argv[i], "--calls") == 0) {
            calls = parse_count("--calls", argv[++i]);
        } else {
            fprintf(stderr, "marker-cost: unknown argument '%s'\n"
                            "usage: marker-cost [--self-receive] [--pairs N] [--calls N]\n",
                    argv[i]);
            return 2;
        }
    }

    struct receiver rx = {.fd = -1};
    if (self_receive && receiver_start(&rx) != 0)
        return 1;

    if (!mlb_enabled()) {
        const char *set = getenv("MLBENCH_MARKER_SOCKET");
        if (set != NULL && set[0] != '\0')
            return 1; /* set but unreachable: the client said why */
        int failures = 0;
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            failures += mlb_stage_begin("step");
        double t1 = now_ns();
        printf("c_disabled_ns_per_call %.2f\n", (t1 - t0) / (double)calls);
        return failures != 0;
    }

    int failures = 0;
    for (long i = 0; i < WARMUP_PAIRS; i++)
        failures += (mlb_stage_begin("warmup") != 0) + (mlb_stage_end("warmup") != 0);
    /* Timed in chunks: the median chunk is the typical cost of an event, the mean over all
     * of them includes the rare slow chunk (a page fault, the receiver's thread on our core). */
    long chunks = (pairs + CHUNK_PAIRS - 1) / CHUNK_PAIRS, done = 0;
    double *per_event = calloc((size_t)chunks, sizeof *per_event);
    if (!per_event)
        return 1;
    double t0 = now_ns();
    for (long c = 0; c < chunks; c++) {
        long n = pairs - done < CHUNK_PAIRS ? pairs - done : CHUNK_PAIRS;
        double c0 = now_ns();
        for (long i = 0; i < n; i++) {
            failures += mlb_stage_begin("step") != 0;
            failures += mlb_stage_end("step") != 0;
        }
        per_event[c] = (now_ns() - c0) / (double)(2 * n);
        done += n;
    }
    double t1 = now_ns();
    qsort(per_event, (size_t)chunks, sizeof *per_event, by_value);
    printf("c_enabled_ns_per_event %.1f\n", per_event[chunks / 2]);
    printf("c_enabled_mean_ns_per_event %.1f\n", (t1 - t0) / (double)(2 * pairs));
    free(per_event);
    if (failures != 0)
        fprintf(stderr, "marker-cost: %d sends failed\n", failures);

    if (self_receive) {
        receiver_stop(&rx);
        unsigned long long sent = 2ull * (unsigned long long)(pairs + WARMUP_PAIRS);
        if (rx.events != sent) {
            fprintf(stderr, "marker-cost: received %llu events of %llu sent\n", rx.events, sent);
            return 1;
        }
    }
    return failures != 0;
}
