/* device: device choice and list options of the CPU-or-CUDA workloads (see device.h). */
#include "common/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/opts.h"
#include "common/rng.h"

const char *const device_names[] = {"auto", "cpu", "cuda", NULL};
const char *const precision_names[] = {"fp32", "tf32", "fp16", "bf16", NULL};

int device_choose(const char *wl, enum device_choice choice, struct device *d)
{
    char err[512];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "cpu");
    if (choice == DEVICE_CPU)
        return 0;
    const struct cuda_backend *cuda = cuda_backend_load(err, sizeof err);
    int n = cuda ? cuda->devices(d->name, sizeof d->name, &d->cc_major, &d->cc_minor, err,
                                 sizeof err)
                 : -1;
    if (n > 0) {
        d->cuda = cuda;
        return 0;
    }
    if (n == 0)
        snprintf(err, sizeof err, "no CUDA GPU found (the driver reports none)");
    snprintf(d->name, sizeof d->name, "cpu");
    if (choice == DEVICE_CUDA) {
        wl_error(wl, "--device cuda: %s", err);
        return -1;
    }
    fprintf(stderr, "mlbench-workload %s: on the CPU: %s\n", wl, err);
    return 0;
}

/* Calls one(item) for each comma-separated item of list; the count or -1. */
static int each(const char *wl, const char *opt, const char *list, int *out,
                int (*one)(const char *wl, const char *opt, const char *item, long min, long max,
                           int *value),
                long min, long max)
{
    char buf[256];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == DEVICE_LIST_MAX) {
            wl_error(wl, "--%s '%s' has more than %d items", opt, list, DEVICE_LIST_MAX);
            return -1;
        }
        if (one(wl, opt, t, min, max, &out[n++]))
            return -1;
    }
    if (n == 0)
        wl_error(wl, "--%s '%s' is empty: give a comma-separated list", opt, list);
    return n ? n : -1;
}

static int one_precision(const char *wl, const char *opt, const char *item, long min, long max,
                         int *value)
{
    (void)min, (void)max;
    return (*value = opt_choice(wl, opt, item, precision_names)) < 0 ? -1 : 0;
}

static int one_int(const char *wl, const char *opt, const char *item, long min, long max,
                   int *value)
{
    long v;
    if (opt_int(wl, opt, item, min, max, &v))
        return -1;
    *value = (int)v;
    return 0;
}

int device_parse_precisions(const char *wl, const char *opt, const char *list, int *out)
{
    return each(wl, opt, list, out, one_precision, 0, 0);
}

int device_parse_ints(const char *wl, const char *opt, const char *list, long min, long max,
                      int *out)
{
    return each(wl, opt, list, out, one_int, min, max);
}

void device_fill(float *x, size_t n, struct rng *r, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (float)(2.0 * rng_uniform(r) - 1.0);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void device_timing(double *times_s, int n, struct gemm_timing *out)
{
    qsort(times_s, (size_t)n, sizeof *times_s, cmp_double);
    out->median_s = n % 2 ? times_s[n / 2] : 0.5 * (times_s[n / 2 - 1] + times_s[n / 2]);
    out->min_s = times_s[0];
    out->max_s = times_s[n - 1];
}

int device_error_is_oom(const char *err)
{
    return err && strstr(err, "out of GPU memory") != NULL;
}
