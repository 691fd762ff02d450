/* histogram: a latency histogram with log-linear buckets (HdrHistogram's layout): values below
 * 2^HIST_SUB_BITS ns are counted exactly, and each power of two above is split into
 * 2^(HIST_SUB_BITS-1) equal buckets, so a value is known to within 1/2^(HIST_SUB_BITS-1) of
 * itself (0.78 %) whatever its size. Values are nanoseconds from 0 to HIST_MAX_NS; larger ones
 * are counted in the top bucket and in `saturated`. Memory is fixed (HIST_BUCKETS counters).
 *
 * Percentiles follow LoadGen's nearest rank (loadgen/results.cc): the p-th percentile of n
 * values is the value of rank ceil(p/100 * n) (1-based) in sorted order; a histogram answers
 * with the highest value its bucket holds, clipped to the largest value recorded, so it never
 * reports less latency than was seen.
 *
 * Not thread-safe: one histogram per thread, merged afterwards. */
#ifndef MLBENCH_HISTOGRAM_H
#define MLBENCH_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define HIST_SUB_BITS 8                       /* 128 buckets per power of two */
#define HIST_MAX_NS ((int64_t)1 << 40)        /* about 18 minutes */
#define HIST_BUCKETS ((size_t)(40 - HIST_SUB_BITS + 2) << (HIST_SUB_BITS - 1))

struct hist {
    uint64_t counts[HIST_BUCKETS];
    uint64_t total;      /* values recorded */
    uint64_t saturated;  /* of them, above HIST_MAX_NS */
    int64_t min_ns, max_ns; /* exact; 0 when empty */
    double sum_ns;       /* for the mean */
};

/* Empties h. */
void hist_reset(struct hist *h);
/* Records one value (negative values count as 0). */
void hist_record(struct hist *h, int64_t value_ns);
/* Adds every value of src to dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* The p-th percentile, 0 < p <= 100 (100: the maximum), as described above; 0 when empty. */
int64_t hist_percentile(const struct hist *h, double p);
/* The mean, or 0 when empty. */
double hist_mean(const struct hist *h);
/* The bucket a value falls in, and the lowest and highest values of bucket i. */
size_t hist_bucket_of(int64_t value_ns);
int64_t hist_bucket_low(size_t i);
int64_t hist_bucket_high(size_t i);
/* Number of values above limit_ns, counted by bucket: exact when limit_ns is a bucket's high
 * end, otherwise the bucket holding limit_ns counts as above it (pessimistic). */
uint64_t hist_count_above(const struct hist *h, int64_t limit_ns);

/* {"unit": "ns", "sub_bucket_bits": 8, "total": n, "saturated": n, "min": ns, "max": ns,
 *  "sum": ns, "buckets": [[low_ns, high_ns, count], ...]} with only the non-empty buckets, in
 * order (docs/load.md). New reference. */
json_t *hist_to_json(const struct hist *h);
/* Reads hist_to_json's form back into h. Returns 0, or -1 with a message in err naming the
 * bad field (a document of another sub_bucket_bits is refused). */
int hist_from_json(struct hist *h, const json_t *j, char *err, size_t errlen);

#endif
