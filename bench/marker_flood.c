/* marker-flood: a workload that marks at a high rate (bench/marker-flood.sh runs it): THREADS
 * threads each do WORK iterations of integer work, then one stage event (begin and end in
 * turn), EVENTS times, and the time the slowest thread took is printed. Run with markers on
 * (under mlbench) and off (outside it), the ratio of the two times is what the markers cost
 * the workload; at the end it sends the counter `flood_sent` with the number of stage events it
 * sent, so that received + dropped can be checked against it.
 *
 * Usage: marker-flood --calibrate NS        prints the WORK that takes NS nanoseconds
 *        marker-flood THREADS EVENTS WORK   prints flood_seconds, flood_sent
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlbench/marker.h"

static long g_events, g_work;
static volatile uint64_t g_sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* WORK steps of a dependent integer chain: the compiler cannot remove or vectorise it. */
static inline uint64_t work(uint64_t x, long steps)
{
    for (long i = 0; i < steps; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void *flood(void *arg)
{
    double *seconds = arg;
    uint64_t x = (uint64_t)(uintptr_t)arg;
    double t0 = now_s();
    for (long i = 0; i < g_events; i++) {
        x = work(x, g_work);
        (void)(i & 1 ? mlb_stage_end("step") : mlb_stage_begin("step"));
    }
    *seconds = now_s() - t0;
    g_sink += x;
    return NULL;
}

static long arg_long(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "marker-flood: '%s' is not a count\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--calibrate")) {
        long want_ns = arg_long(argv[2]), steps = 1000000;
        double best = 1e9;
        for (int k = 0; k < 7; k++) { /* the fastest of 7: the machine's undisturbed speed */
            double t0 = now_s();
            g_sink += work(k, steps);
            double t = (now_s() - t0) / (double)steps;
            best = t < best ? t : best;
        }
        printf("%ld\n", (long)((double)want_ns * 1e-9 / best + 0.5));
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: marker-flood --calibrate NS | marker-flood THREADS EVENTS WORK\n");
        return 2;
    }
    long threads = arg_long(argv[1]);
    g_events = arg_long(argv[2]);
    g_work = arg_long(argv[3]);
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "marker-flood: THREADS must be 1 to 64\n");
        return 2;
    }
    pthread_t t[64];
    double seconds[64];
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, flood, &seconds[i]);
    double slowest = 0;
    for (long i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        slowest = seconds[i] > slowest ? seconds[i] : slowest;
    }
    mlb_counter("flood_sent", (double)threads * (double)g_events);
    printf("flood_seconds %.4f\nflood_sent %ld\n", slowest, threads * g_events);
    return 0;
}
