/* opts: parsing of workload options with the messages the project promises: a bad value is
 * named with the option and what to do, and the caller exits 2. Messages go to stderr as
 * "mlbench-workload <workload>: ...". */
#ifndef MLBENCH_WL_OPTS_H
#define MLBENCH_WL_OPTS_H

#include <stdarg.h>
#include <stdint.h>

/* Prints "mlbench-workload <wl>: <message>\n" to stderr. */
void wl_error(const char *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses val as an integer in [min, max] into *out. On a bad value prints
 * "--<opt> 'VAL' must be an integer from MIN to MAX" and returns -1; else 0. */
int opt_int(const char *wl, const char *opt, const char *val, long min, long max, long *out);
/* Same for a finite number in [min, max]. */
int opt_double(const char *wl, const char *opt, const char *val, double min, double max,
               double *out);
/* Parses val as an unsigned 64-bit seed. */
int opt_u64(const char *wl, const char *opt, const char *val, uint64_t *out);
/* Returns the index of val in the NULL-terminated list choices, or prints
 * "--<opt> 'VAL' is not one of: a, b, c" and returns -1. */
int opt_choice(const char *wl, const char *opt, const char *val, const char *const *choices);

/* Number of CPUs this process may run on (sched_getaffinity), at least 1. */
int wl_online_cpus(void);
/* CLOCK_MONOTONIC in seconds. */
double wl_now(void);

#endif
