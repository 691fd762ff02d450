/* clock: the harness's clocks in nanoseconds. CLOCK_MONOTONIC for durations and for the
 * timestamps of samples and markers (the marker clients stamp with the same clock), and
 * CLOCK_REALTIME for when something happened. Thread-safe (vDSO calls). */
#ifndef MLBENCH_CLOCK_H
#define MLBENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_MONOTONIC, ns. */
static inline int64_t mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* CLOCK_REALTIME (Unix time), ns. */
static inline int64_t unix_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

#endif
