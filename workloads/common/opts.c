/* opts: option parsing helpers for the workloads (see opts.h). */
#include "common/opts.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void wl_error(const char *wl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mlbench-workload %s: ", wl);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int wl_out_of_memory(const char *wl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mlbench-workload %s: out of memory: ", wl);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return WL_EXIT_OOM;
}

char *wl_format_bytes(double bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.1f %s", bytes, unit[u]);
    return buf;
}

int opt_size(const char *wl, const char *opt, const char *val, int64_t *out)
{
    static const struct {
        const char *name;
        double factor;
    } units[] = {
        {"", 1},        {"b", 1},         {"k", 1024.0},   {"kib", 1024.0},
        {"m", 1048576.0}, {"mib", 1048576.0}, {"g", 1073741824.0}, {"gib", 1073741824.0},
        {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"kb", 1e3}, {"mb", 1e6},
        {"gb", 1e9},    {"tb", 1e12},
    };
    char *end;
    errno = 0;
    double v = val && *val && *val != '-' ? strtod(val, &end) : NAN;
    int ok = !errno && isfinite(v) && v >= 0 && end != val;
    double bytes = NAN;
    for (size_t i = 0; ok && i < sizeof units / sizeof units[0]; i++)
        if (!strcasecmp(end, units[i].name))
            bytes = v * units[i].factor;
    if (!ok || !(bytes >= 1) || bytes > 9.2e18) {
        wl_error(wl, "--%s '%s' must be a size such as 64MiB or 2G (at least 1 byte)", opt,
                 val ? val : "");
        return -1;
    }
    *out = (int64_t)bytes;
    return 0;
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

/* Stores one option's value; 0, or -1 with the message printed. */
static int store(const char *wl, const struct wl_opt *o, const char *val)
{
    long v;
    int k;
    switch (o->type) {
    case OPT_INT:
        if (opt_int(wl, o->name, val, (long)o->min, (long)o->max, &v))
            return -1;
        *(int *)o->out = (int)v;
        return 0;
    case OPT_LONG:
        return opt_int(wl, o->name, val, (long)o->min, (long)o->max, (long *)o->out);
    case OPT_DOUBLE:
        return opt_double(wl, o->name, val, o->min, o->max, (double *)o->out);
    case OPT_U64:
        return opt_u64(wl, o->name, val, (uint64_t *)o->out);
    case OPT_CHOICE:
        if ((k = opt_choice(wl, o->name, val, o->choices)) < 0)
            return -1;
        *(int *)o->out = k;
        return 0;
    case OPT_FLAG:
        *(int *)o->out = 1;
        return 0;
    case OPT_SIZE:
        return opt_size(wl, o->name, val, (int64_t *)o->out);
    case OPT_STRING:
        if (!*val) {
            wl_error(wl, "--%s '' is empty: give a value", o->name);
            return -1;
        }
        *(const char **)o->out = val;
        return 0;
    }
    return -1;
}

int opts_parse(const char *wl, int argc, char **argv, const struct wl_opt *table, int n,
               const char *usage)
{
    struct option *longs = calloc((size_t)n + 2, sizeof *longs);
    if (!longs) {
        wl_error(wl, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        longs[i] = (struct option){table[i].name,
                                   table[i].type == OPT_FLAG ? no_argument : required_argument,
                                   NULL, 256 + i};
    longs[n] = (struct option){"help", no_argument, NULL, 256 + n};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c >= 256 && c < 256 + n) {
            rc = store(wl, &table[c - 256], optarg);
        } else if (c == 256 + n) {
            fputs(usage, stdout);
            rc = 1;
        } else if (c == ':') {
            wl_error(wl, "option '%s' needs a value (see mlbench-workload %s --help)",
                     argv[optind - 1], wl);
            rc = -1;
        } else {
            wl_error(wl, "unknown option '%s' (see mlbench-workload %s --help)",
                     argv[optind - 1], wl);
            rc = -1;
        }
    }
    if (rc == 0 && optind < argc) {
        wl_error(wl, "unexpected argument '%s' (see mlbench-workload %s --help)", argv[optind],
                 wl);
        rc = -1;
    }
    free(longs);
    return rc;
}

int wl_online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

int wl_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len > (1U << 30) ? (1U << 30) : len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

double wl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
