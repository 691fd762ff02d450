/* opts: option parsing helpers for the workloads (see opts.h). */
#include "common/opts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void wl_error(const char *wl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mlbench-workload %s: ", wl);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int opt_int(const char *wl, const char *opt, const char *val, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = val ? strtol(val, &end, 10) : 0;
    if (!val || !*val || *end || errno || v < min || v > max) {
        wl_error(wl, "--%s '%s' must be an integer from %ld to %ld", opt, val ? val : "", min,
                 max);
        return -1;
    }
    *out = v;
    return 0;
}

int opt_double(const char *wl, const char *opt, const char *val, double min, double max,
               double *out)
{
    char *end;
    errno = 0;
    double v = val ? strtod(val, &end) : 0;
    if (!val || !*val || *end || errno || !isfinite(v) || v < min || v > max) {
        wl_error(wl, "--%s '%s' must be a number from %g to %g", opt, val ? val : "", min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int opt_u64(const char *wl, const char *opt, const char *val, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = val ? strtoull(val, &end, 10) : 0;
    if (!val || !*val || *end || errno || *val == '-') {
        wl_error(wl, "--%s '%s' must be a whole number from 0 to %" PRIu64, opt,
                 val ? val : "", UINT64_MAX);
        return -1;
    }
    *out = v;
    return 0;
}

int opt_choice(const char *wl, const char *opt, const char *val, const char *const *choices)
{
    for (int i = 0; choices[i]; i++)
        if (val && !strcmp(val, choices[i]))
            return i;
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
    }
    wl_error(wl, "--%s '%s' is not one of: %s", opt, val ? val : "", list);
    return -1;
}

int wl_online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

double wl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
