/* histogram: a latency histogram with log-linear buckets (HdrHistogram's layout): values below
 * 2^HIST_SUB_BITS ns are counted exactly, and each power of two above is split into
 * 2^(HIST_SUB_BITS-1) equal buckets, so a value is known to within 1/2^(HIST_SUB_BITS-1) of
 * itself (0.78 %) whatever its size. Values are nanoseconds from 0 to HIST_MAX_NS - 1; larger
 * ones are counted in the top bucket and in `saturated` (their percentiles report max_ns, the
 * exact largest value). Memory is fixed (HIST_BUCKETS counters).
 *
 * Percentiles follow MLPerf LoadGen (loadgen/results.cc, PerformanceSummary::ProcessLatencies):
 * of n latencies sorted ascending it reports sorted[(size_t)(n * f)], 0-based, f = p/100 a
 * double; that is the value of rank floor(n * p/100) + 1 (1-based), not the textbook nearest
 * rank ceil(n * p/100) (p90 of 100 values is the 91st). hist_rank computes that rank. A
 * histogram answers with the highest value of the bucket holding the rank, clipped to max_ns
 * (rank 1 gives min_ns, rank n max_ns), so it never reports less latency than was seen, and it
 * is exact for values below 2^HIST_SUB_BITS.
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
    uint64_t saturated;  /* of them, at or above HIST_MAX_NS */
    int64_t min_ns, max_ns; /* exact; 0 when empty */
    double sum_ns;       /* for the mean (exact while below 2^53 ns, 104 days) */
};

/* Empties h. */
void hist_reset(struct hist *h);
/* Records one value (negative values count as 0). */
void hist_record(struct hist *h, int64_t value_ns);
/* Adds every value of src to dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* The p-th percentile, 0 < p <= 100 (100: the maximum), as described above; 0 when empty. */
int64_t hist_percentile(const struct hist *h, double p);
/* LoadGen's fraction for a percentile: p/100 as the nearest double to the decimal (99.9 gives
 * the double 0.999, as LoadGen's literal; plain 99.9 / 100 is one ulp above it). p is
 * rounded to 6 decimals first. */
double hist_fraction(double p);
/* LoadGen's 1-based rank of the p-th percentile of n values: floor(n * hist_fraction(p)) + 1
 * in double arithmetic, as LoadGen computes it, clipped to [1, n]; 0 when n is 0. */
uint64_t hist_rank(uint64_t n, double p);
/* The value of 1-based rank (1..total) as the histogram reports it (above); 0 when empty. */
int64_t hist_value_at_rank(const struct hist *h, uint64_t rank);
/* The mean, or 0 when empty. */
double hist_mean(const struct hist *h);
/* The bucket a value falls in (negative: 0; HIST_MAX_NS and above: the top one), and the
 * lowest and highest values of bucket i (-1 when i >= HIST_BUCKETS). */
size_t hist_bucket_of(int64_t value_ns);
int64_t hist_bucket_low(size_t i);
int64_t hist_bucket_high(size_t i);
/* Number of values above limit_ns, counted by bucket: exact when limit_ns is a bucket's high
 * end (every limit below 2^HIST_SUB_BITS is), below min_ns or at least max_ns; otherwise the
 * bucket holding limit_ns counts as above it (pessimistic). */
uint64_t hist_count_above(const struct hist *h, int64_t limit_ns);

/* {"unit": "ns", "sub_bucket_bits": 8, "total": n, "saturated": n, "min": ns, "max": ns,
 *  "sum": ns, "buckets": [[low_ns, high_ns, count], ...]} with only the non-empty buckets, in
 * order (docs/load.md). New reference. */
json_t *hist_to_json(const struct hist *h);
/* Reads hist_to_json's form back into h. Returns 0, or -1 with a message in err naming the
 * bad field (a document of another sub_bucket_bits is refused) and h emptied. Strict: every
 * field present with its type, buckets on bucket boundaries in increasing order with counts
 * >= 1 adding up to total, min and max in the first and last bucket, saturated no more than
 * the top bucket holds. */
int hist_from_json(struct hist *h, const json_t *j, char *err, size_t errlen);

#endif
