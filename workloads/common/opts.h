/* opts: parsing of workload options with the messages the project promises: a bad value is
 * named with the option and what to do, and the caller exits 2. Messages go to stderr as
 * "mlbench-workload <workload>: ...". Also the few system helpers every workload shares. */
#ifndef MLBENCH_WL_OPTS_H
#define MLBENCH_WL_OPTS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* The exit status of a workload that ran out of memory: over --max-memory, or an allocation of
 * its batch-sized buffers failed (docs/workloads.md). mlbench's classifier knows it as
 * OOM_WORKLOAD_EXIT (src/measure/oom.h): keep the two equal. */
#define WL_EXIT_OOM 3
/* The exit status of a run to a target (imgclf --until-accuracy) that ended its limit of epochs
 * without reaching it: it ran and measured, but did not do what it was asked
 * (docs/workloads.md). */
#define WL_EXIT_TARGET_MISSED 4

/* Prints "mlbench-workload <wl>: <message>\n" to stderr. */
void wl_error(const char *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses val as an integer in [min, max] into *out. On a bad value prints
 * "--<opt> 'VAL' must be an integer from MIN to MAX" and returns -1; else 0. */
int opt_int(const char *wl, const char *opt, const char *val, long min, long max, long *out);
/* Same for a finite number in [min, max]. */
int opt_double(const char *wl, const char *opt, const char *val, double min, double max,
               double *out);
/* Prints "mlbench-workload <wl>: out of memory: <message>\n" to stderr (the line mlbench
 * recognises with the status) and returns WL_EXIT_OOM. */
int wl_out_of_memory(const char *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* bytes as "81.0 MiB" (B, KiB, MiB, GiB, TiB) into buf; returns buf. */
char *wl_format_bytes(double bytes, char *buf, size_t len);

/* Parses val as a size in bytes into *out: a number (a fraction allowed) and a unit, B (or
 * none), K/KiB, M/MiB, G/GiB, T/TiB (powers of 1024) or kB/KB, MB, GB, TB (powers of 1000),
 * case-insensitive: "64MiB", "1.5G", "4096". At least 1 byte. On a bad value prints "--<opt>
 * 'VAL' must be a size such as 64MiB or 2G" and returns -1; else 0. */
int opt_size(const char *wl, const char *opt, const char *val, int64_t *out);
/* Parses val as an unsigned 64-bit seed. */
int opt_u64(const char *wl, const char *opt, const char *val, uint64_t *out);
/* Returns the index of val in the NULL-terminated list choices, or prints
 * "--<opt> 'VAL' is not one of: a, b, c" and returns -1. */
int opt_choice(const char *wl, const char *opt, const char *val, const char *const *choices);

/* One option of a workload's table for opts_parse: --name, its type, where its value goes. */
enum opt_type {
    OPT_INT,    /* int *out, in [min, max] */
    OPT_LONG,   /* long *out, in [min, max] */
    OPT_DOUBLE, /* double *out, in [min, max] */
    OPT_U64,    /* uint64_t *out */
    OPT_CHOICE, /* int *out = index of the value in choices */
    OPT_FLAG,   /* int *out = 1; takes no value */
    OPT_STRING, /* const char **out = the value (not empty; points into argv) */
    OPT_SIZE,   /* int64_t *out = bytes (opt_size) */
};

struct wl_opt {
    const char *name;
    enum opt_type type;
    void *out;
    double min, max;
    const char *const *choices; /* OPT_CHOICE: NULL-terminated */
};

/* Table rows, one per type. */
#define WL_INT(name, out, lo, hi) {(name), OPT_INT, (out), (lo), (hi), NULL}
#define WL_LONG(name, out, lo, hi) {(name), OPT_LONG, (out), (lo), (hi), NULL}
#define WL_DOUBLE(name, out, lo, hi) {(name), OPT_DOUBLE, (out), (lo), (hi), NULL}
#define WL_U64(name, out) {(name), OPT_U64, (out), 0, 0, NULL}
#define WL_CHOICE(name, out, list) {(name), OPT_CHOICE, (out), 0, 0, (list)}
#define WL_FLAG(name, out) {(name), OPT_FLAG, (out), 0, 0, NULL}
#define WL_STRING(name, out) {(name), OPT_STRING, (out), 0, 0, NULL}
#define WL_SIZE(name, out) {(name), OPT_SIZE, (out), 0, 0, NULL}

/* Parses argv (argv[0] the workload's name) against the n options of table, plus --help, which
 * prints usage to stdout and returns 1. A bad value, an unknown option, a missing value or a
 * stray argument prints a message naming it and returns -1. Otherwise 0; only the options given
 * are written. */
int opts_parse(const char *wl, int argc, char **argv, const struct wl_opt *table, int n,
               const char *usage);

/* Number of CPUs this process may run on (sched_getaffinity), at least 1. */
int wl_online_cpus(void);
/* Writes all len bytes of buf to fd (retrying short writes and EINTR); 0, or -1 with errno. */
int wl_write_all(int fd, const void *buf, size_t len);
/* CLOCK_MONOTONIC in seconds. */
double wl_now(void);

#endif
