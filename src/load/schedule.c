/* schedule: Poisson arrivals from a seeded splitmix64 generator (see schedule.h). */
#include "load/schedule.h"

#include <math.h>

uint64_t schedule_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

double schedule_uniform(uint64_t *state)
{
    /* 1 .. 2^53 over 2^53: never 0, so the logarithm below is finite. */
    return (double)((schedule_splitmix64(state) >> 11) + 1) * 0x1.0p-53;
}

void schedule_init(struct schedule *s, double qps, uint64_t seed, int64_t start_ns)
{
    s->state = seed;
    s->mean_gap_ns = 1e9 / qps;
    s->start_ns = start_ns;
    s->next_ns = 0;
}

int64_t schedule_next(struct schedule *s)
{
    s->next_ns += -log(schedule_uniform(&s->state)) * s->mean_gap_ns;
    /* 9.2e18: below INT64_MAX, so the conversion is defined; NaN (qps not checked) too. */
    if (!(s->next_ns < 9.2e18 - (double)s->start_ns))
        return INT64_MAX;
    return s->start_ns + llround(s->next_ns);
}
