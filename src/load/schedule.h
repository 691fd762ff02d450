/* schedule: when the queries of a scenario are due. The server scenario's arrivals are a
 * Poisson process at a target rate, as LoadGen's (loadgen/loadgen.cc, ScheduleDistribution):
 * inter-arrival gaps drawn from an exponential distribution with mean 1/qps, from a seeded
 * splitmix64 generator, so a run can be repeated query for query from its recorded seed.
 * Pure and deterministic; not thread-safe (one per generator thread). */
#ifndef MLBENCH_SCHEDULE_H
#define MLBENCH_SCHEDULE_H

#include <stdint.h>

struct schedule {
    uint64_t state;    /* splitmix64 state */
    double mean_gap_ns; /* 1e9 / qps */
    double next_ns;    /* the next query's due time, kept in double so gaps do not round away */
};

/* Sets up arrivals at qps (> 0) from seed, the first one a gap after start_ns. */
void schedule_init(struct schedule *s, double qps, uint64_t seed, int64_t start_ns);
/* The due time (CLOCK_MONOTONIC ns) of the next query; each call advances by one gap. */
int64_t schedule_next(struct schedule *s);
/* One splitmix64 step (the generator the schedule uses), exposed for the tests. */
uint64_t schedule_splitmix64(uint64_t *state);
/* A uniform double in (0, 1] from a splitmix64 state. */
double schedule_uniform(uint64_t *state);

#endif
