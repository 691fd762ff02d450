/* rng: a small deterministic random number generator (xoshiro256**, seeded by splitmix64), so
 * that every workload gives the same data and weights for the same --seed on any machine. Not
 * thread-safe on one state: give each thread its own (rng_seed with a derived seed). */
#ifndef MLBENCH_WL_RNG_H
#define MLBENCH_WL_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
};

/* Seeds *r from seed; any seed, 0 included, gives a valid state. */
void rng_seed(struct rng *r, uint64_t seed);
/* A seed for stream `stream` derived from seed (independent streams per thread or per item). */
uint64_t rng_derive(uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1). */
double rng_uniform(struct rng *r);
/* Uniform integer in [0, n); n > 0. */
uint32_t rng_below(struct rng *r, uint32_t n);
/* Standard normal (Marsaglia polar method). */
double rng_normal(struct rng *r);

#endif
