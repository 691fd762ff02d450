/* histogram: log-linear latency histogram, LoadGen's percentile rank, and the JSON form
 * (see histogram.h; the layout and the rank rule are explained for users in docs/load.md). */
#include "load/histogram.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SUB_COUNT ((int64_t)1 << HIST_SUB_BITS) /* values below are their own bucket */
#define HALF_BITS (HIST_SUB_BITS - 1)           /* log2 of the buckets per power of two */
#define TOP_BUCKET (HIST_BUCKETS - 1)

/* The bucket of v, 0 <= v < HIST_MAX_NS. A value of e + 1 bits (e >= HIST_SUB_BITS) keeps its
 * top HIST_SUB_BITS bits: shifted right by s = e - HALF_BITS it lies in [128, 256), and the
 * buckets of that power of two follow the s * 128 buckets below. */
static inline size_t bucket_index(int64_t v)
{
    if (v < SUB_COUNT)
        return (size_t)v;
    int shift = 63 - __builtin_clzll((uint64_t)v) - HALF_BITS;
    return ((size_t)shift << HALF_BITS) + (size_t)(v >> shift);
}

size_t hist_bucket_of(int64_t value_ns)
{
    if (value_ns < 0)
        return 0;
    if (value_ns >= HIST_MAX_NS)
        return TOP_BUCKET;
    return bucket_index(value_ns);
}

int64_t hist_bucket_low(size_t i)
{
    if (i >= HIST_BUCKETS)
        return -1;
    if (i < (size_t)SUB_COUNT)
        return (int64_t)i;
    int shift = (int)(i >> HALF_BITS) - 1;
    int64_t sub = (int64_t)(i & (((size_t)1 << HALF_BITS) - 1)) + ((int64_t)1 << HALF_BITS);
    return sub << shift;
}

int64_t hist_bucket_high(size_t i)
{
    if (i >= HIST_BUCKETS)
        return -1;
    if (i < (size_t)SUB_COUNT)
        return (int64_t)i;
    int shift = (int)(i >> HALF_BITS) - 1;
    return hist_bucket_low(i) + ((int64_t)1 << shift) - 1;
}

void hist_reset(struct hist *h)
{
    memset(h, 0, sizeof *h);
}

void hist_record(struct hist *h, int64_t value_ns)
{
    int64_t v = value_ns < 0 ? 0 : value_ns;
    size_t i;
    if (v < HIST_MAX_NS) {
        i = bucket_index(v);
    } else {
        i = TOP_BUCKET;
        h->saturated++;
    }
    h->counts[i]++;
    if (h->total++ == 0 || v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
    h->sum_ns += (double)v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->total == 0)
        return;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    if (dst->total == 0 || src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
    dst->total += src->total;
    dst->saturated += src->saturated;
    dst->sum_ns += src->sum_ns;
}

double hist_fraction(double p)
{
    if (!(p > 0)) /* NaN too */
        return 0;
    if (p >= 100)
        return 1;
    /* p * 1e6 is an exact integer for a percentile of up to 6 decimals; dividing that
     * integer by 1e8 rounds once, to the double nearest the decimal fraction. */
    return round(p * 1e6) / 1e8;
}

uint64_t hist_rank(uint64_t n, double p)
{
    if (n == 0)
        return 0;
    double f = hist_fraction(p);
    if (f >= 1)
        return n;
    /* LoadGen: sorted[sample_count * percentile], the product in double, truncated. */
    double index = (double)n * f;
    if (index >= (double)(n - 1))
        return n;
    return (uint64_t)index + 1;
}

int64_t hist_value_at_rank(const struct hist *h, uint64_t rank)
{
    if (h->total == 0)
        return 0;
    if (rank <= 1)
        return h->min_ns;
    if (rank >= h->total || rank > h->total - h->saturated)
        return h->max_ns; /* the saturated values are the largest, and only max is known */
    uint64_t seen = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            int64_t high = hist_bucket_high(i);
            return high < h->max_ns ? high : h->max_ns;
        }
    }
    return h->max_ns; /* counts that do not add up to total: not from this module */
}

int64_t hist_percentile(const struct hist *h, double p)
{
    return hist_value_at_rank(h, hist_rank(h->total, p));
}

double hist_mean(const struct hist *h)
{
    return h->total ? h->sum_ns / (double)h->total : 0;
}

uint64_t hist_count_above(const struct hist *h, int64_t limit_ns)
{
    if (h->total == 0 || limit_ns >= h->max_ns)
        return 0;
    if (limit_ns < h->min_ns)
        return h->total;
    if (limit_ns >= HIST_MAX_NS)
        return h->saturated; /* all of them may be above: pessimistic */
    size_t i = bucket_index(limit_ns);
    if (limit_ns == hist_bucket_high(i))
        i++;
    if (i > TOP_BUCKET) /* limit_ns = HIST_MAX_NS - 1: the saturated values are above it */
        return h->saturated;
    uint64_t above = 0;
    for (; i < HIST_BUCKETS; i++)
        above += h->counts[i];
    return above;
}

json_t *hist_to_json(const struct hist *h)
{
    json_t *buckets = json_array();
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        if (h->counts[i])
            json_array_append_new(buckets, json_pack("[I, I, I]", (json_int_t)hist_bucket_low(i),
                                                     (json_int_t)hist_bucket_high(i),
                                                     (json_int_t)h->counts[i]));
    return json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:f, s:o}", "unit", "ns", "sub_bucket_bits",
                     HIST_SUB_BITS, "total", (json_int_t)h->total, "saturated",
                     (json_int_t)h->saturated, "min", (json_int_t)h->min_ns, "max",
                     (json_int_t)h->max_ns, "sum", h->sum_ns, "buckets", buckets);
}

/* ---- reading the JSON form back: every field checked before it meets arithmetic ---- */

/* What v is, for messages: "missing", "a string", or the number itself. */
static const char *describe(const json_t *v, char *buf, size_t len)
{
    if (!v)
        return "missing";
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        snprintf(buf, len, "%.17g (not an integer)", json_real_value(v));
        return buf;
    case JSON_STRING: return "a string";
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_NULL: return "null";
    default: return "a boolean";
    }
}

/* j[key] as an integer >= 0 into *out, or -1 with the message. */
static int get_natural(const json_t *j, const char *key, json_int_t *out, char *err,
                       size_t errlen)
{
    const json_t *v = json_object_get(j, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char buf[64];
        snprintf(err, errlen, "histogram: \"%s\" must be an integer >= 0, got %s", key,
                 describe(v, buf, sizeof buf));
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

/* The header fields: unit, sub_bucket_bits, total, saturated, min, max, sum. */
struct header {
    json_int_t total, saturated, min, max;
    double sum;
};

static int read_header(const json_t *j, struct header *hd, char *err, size_t errlen)
{
    char buf[64];
    const char *unit = json_string_value(json_object_get(j, "unit"));
    if (!unit || strcmp(unit, "ns") != 0) {
        snprintf(err, errlen, "histogram: \"unit\" must be \"ns\", got %s",
                 unit ? unit : describe(json_object_get(j, "unit"), buf, sizeof buf));
        return -1;
    }
    const json_t *bits = json_object_get(j, "sub_bucket_bits");
    if (!json_is_integer(bits) || json_integer_value(bits) != HIST_SUB_BITS) {
        snprintf(err, errlen, "histogram: \"sub_bucket_bits\" is %s; this build reads only %d",
                 describe(bits, buf, sizeof buf), HIST_SUB_BITS);
        return -1;
    }
    if (get_natural(j, "total", &hd->total, err, errlen) ||
        get_natural(j, "saturated", &hd->saturated, err, errlen) ||
        get_natural(j, "min", &hd->min, err, errlen) ||
        get_natural(j, "max", &hd->max, err, errlen))
        return -1;
    const json_t *sum = json_object_get(j, "sum");
    hd->sum = json_is_number(sum) ? json_number_value(sum) : NAN;
    if (!(hd->sum >= 0 && hd->sum < HUGE_VAL)) {
        snprintf(err, errlen, "histogram: \"sum\" must be a finite number >= 0, got %s",
                 describe(sum, buf, sizeof buf));
        return -1;
    }
    if (hd->saturated > hd->total) {
        snprintf(err, errlen, "histogram: \"saturated\" (%" JSON_INTEGER_FORMAT
                 ") is more than \"total\" (%" JSON_INTEGER_FORMAT ")", hd->saturated, hd->total);
        return -1;
    }
    if (hd->min > hd->max || (hd->total == 0 && (hd->max != 0 || hd->sum != 0))) {
        snprintf(err, errlen, "histogram: \"min\" %" JSON_INTEGER_FORMAT ", \"max\" %"
                 JSON_INTEGER_FORMAT " and \"sum\" %.17g do not fit \"total\" %"
                 JSON_INTEGER_FORMAT, hd->min, hd->max, hd->sum, hd->total);
        return -1;
    }
    /* Values at or above HIST_MAX_NS are exactly the saturated ones. */
    if (hd->total > 0 && ((hd->max >= HIST_MAX_NS) != (hd->saturated > 0) ||
                          (hd->min >= HIST_MAX_NS) != (hd->saturated == hd->total))) {
        snprintf(err, errlen, "histogram: \"saturated\" %" JSON_INTEGER_FORMAT " does not fit "
                 "\"min\" %" JSON_INTEGER_FORMAT " and \"max\" %" JSON_INTEGER_FORMAT
                 " (values from %" PRId64 " ns on are saturated)", hd->saturated, hd->min,
                 hd->max, HIST_MAX_NS);
        return -1;
    }
    /* sum is a double of total values between min and max; 1e-9: its rounding. */
    double n = (double)hd->total;
    if (hd->sum < n * (double)hd->min * (1 - 1e-9) || hd->sum > n * (double)hd->max * (1 + 1e-9)) {
        snprintf(err, errlen, "histogram: \"sum\" %.17g is outside total * min .. total * max "
                 "(%.17g .. %.17g)", hd->sum, n * (double)hd->min, n * (double)hd->max);
        return -1;
    }
    return 0;
}

/* buckets[k] = [low, high, count] into h->counts, after bucket *prev (SIZE_MAX: none yet). */
static int read_bucket(struct hist *h, const json_t *b, size_t k, size_t *prev, char *err,
                       size_t errlen)
{
    json_int_t f[3];
    for (size_t c = 0; c < 3; c++) {
        const json_t *v = json_array_get(b, c);
        if (!json_is_array(b) || json_array_size(b) != 3 || !json_is_integer(v) ||
            json_integer_value(v) < 0) {
            snprintf(err, errlen, "histogram: buckets[%zu] must be [low_ns, high_ns, count] of "
                     "integers >= 0", k);
            return -1;
        }
        f[c] = json_integer_value(v);
    }
    size_t i = hist_bucket_of(f[0]);
    if (f[0] >= HIST_MAX_NS || f[0] != hist_bucket_low(i) || f[1] != hist_bucket_high(i)) {
        snprintf(err, errlen, "histogram: buckets[%zu] [%" JSON_INTEGER_FORMAT ", %"
                 JSON_INTEGER_FORMAT "] is not a bucket (the one holding %" JSON_INTEGER_FORMAT
                 " is [%" PRId64 ", %" PRId64 "])", k, f[0], f[1], f[0], hist_bucket_low(i),
                 hist_bucket_high(i));
        return -1;
    }
    if (*prev != SIZE_MAX && i <= *prev) {
        snprintf(err, errlen, "histogram: buckets[%zu] (low %" JSON_INTEGER_FORMAT ") is out of "
                 "order: buckets must be in increasing order, each once", k, f[0]);
        return -1;
    }
    if (f[2] < 1) {
        snprintf(err, errlen, "histogram: buckets[%zu] has count 0: only non-empty buckets "
                 "are listed", k);
        return -1;
    }
    if ((uint64_t)f[2] > UINT64_MAX - h->total) {
        snprintf(err, errlen, "histogram: buckets[%zu]: the counts overflow", k);
        return -1;
    }
    h->counts[i] = (uint64_t)f[2];
    h->total += (uint64_t)f[2];
    *prev = i;
    return 0;
}

static int read_buckets(struct hist *h, const json_t *j, const struct header *hd, char *err,
                        size_t errlen)
{
    const json_t *buckets = json_object_get(j, "buckets");
    if (!json_is_array(buckets)) {
        char buf[64];
        snprintf(err, errlen, "histogram: \"buckets\" must be an array, got %s",
                 describe(buckets, buf, sizeof buf));
        return -1;
    }
    size_t prev = SIZE_MAX, first = SIZE_MAX;
    for (size_t k = 0; k < json_array_size(buckets); k++) {
        if (read_bucket(h, json_array_get(buckets, k), k, &prev, err, errlen))
            return -1;
        if (first == SIZE_MAX)
            first = prev;
    }
    if (h->total != (uint64_t)hd->total) {
        snprintf(err, errlen, "histogram: the buckets' counts add up to %" PRIu64 ", but "
                 "\"total\" is %" JSON_INTEGER_FORMAT, h->total, hd->total);
        return -1;
    }
    if (hd->total == 0)
        return 0;
    if (hist_bucket_of(hd->min) != first || hist_bucket_of(hd->max) != prev) {
        snprintf(err, errlen, "histogram: \"min\" %" JSON_INTEGER_FORMAT " or \"max\" %"
                 JSON_INTEGER_FORMAT " is not in the first or last bucket listed", hd->min,
                 hd->max);
        return -1;
    }
    if ((uint64_t)hd->saturated > h->counts[TOP_BUCKET]) {
        snprintf(err, errlen, "histogram: \"saturated\" %" JSON_INTEGER_FORMAT " is more than "
                 "the top bucket holds (%" PRIu64 ")", hd->saturated, h->counts[TOP_BUCKET]);
        return -1;
    }
    return 0;
}

int hist_from_json(struct hist *h, const json_t *j, char *err, size_t errlen)
{
    hist_reset(h);
    if (!json_is_object(j)) {
        char buf[64];
        snprintf(err, errlen, "histogram: expected an object, got %s", describe(j, buf, sizeof buf));
        return -1;
    }
    struct header hd;
    if (read_header(j, &hd, err, errlen) || read_buckets(h, j, &hd, err, errlen)) {
        hist_reset(h);
        return -1;
    }
    h->saturated = (uint64_t)hd.saturated;
    h->min_ns = hd.min;
    h->max_ns = hd.max;
    h->sum_ns = hd.sum;
    return 0;
}
