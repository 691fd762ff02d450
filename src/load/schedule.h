/* schedule: when the queries of a scenario are due. The server scenario's arrivals are a
 * Poisson process at a target rate: inter-arrival gaps drawn from an exponential distribution
 * with mean 1/qps, from a seeded splitmix64 generator, so a run can be repeated query for query
 * from its recorded seed. Pure and deterministic; not thread-safe (one per generator thread).
 *
 * MLPerf LoadGen (loadgen/loadgen.cc, ScheduleDistribution<TestScenario::Server> and
 * GenerateQueries) does the same process with other arithmetic: std::mt19937 seeded with
 * schedule_rng_seed feeds std::exponential_distribution<>(qps) (seconds); each gap is
 * truncated to whole nanoseconds (duration_cast) and summed in integer nanoseconds; the first
 * query is due at the start. Here gaps are -ln(u) * 1e9/qps ns with u uniform in (0, 1],
 * summed in a double offset from the start and rounded once per due time (no truncation
 * bias), and the first query is due one gap after the start. Same distribution of arrivals;
 * a LoadGen seed does not reproduce LoadGen's timeline. */
#ifndef MLBENCH_SCHEDULE_H
#define MLBENCH_SCHEDULE_H

#include <stdint.h>

struct schedule {
    uint64_t state;     /* splitmix64 state */
    double mean_gap_ns; /* 1e9 / qps */
    int64_t start_ns;   /* the time the schedule counts from */
    double next_ns;     /* the last due time handed out, as an offset from start_ns; kept in
                           double so gaps do not round away, and small so it stays precise */
};

/* Sets up arrivals at qps (> 0, finite: the caller checks the user's value) from seed, the
 * first one a gap after start_ns. */
void schedule_init(struct schedule *s, double qps, uint64_t seed, int64_t start_ns);
/* The due time (CLOCK_MONOTONIC ns) of the next query: start_ns + llround(offset), the offset
 * advanced by one gap each call; never decreasing; INT64_MAX once past it. */
int64_t schedule_next(struct schedule *s);
/* One splitmix64 step (Steele, Lea and Flood 2014; the constants of Vigna's reference code),
 * the generator the schedule uses, exposed for the tests. */
uint64_t schedule_splitmix64(uint64_t *state);
/* A uniform double in (0, 1] from a splitmix64 state: (top 53 bits + 1) / 2^53. */
double schedule_uniform(uint64_t *state);

#endif
