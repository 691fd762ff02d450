/* Unit tests of src/load/histogram.c (latency histogram, LoadGen's percentile rank, JSON form).
 *
 * The reference for every percentile is computed here from the sorted values with LoadGen's
 * own expression (loadgen/results.cc, ProcessLatencies): sorted[(size_t)(n * f)], f the double
 * literal LoadGen uses (.50, .90, .95, .97, .99, .999). Latencies come from a generator local
 * to this file (a 64-bit LCG, Knuth's MMIX constants), not from the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/histogram.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define N_RANDOM 100000

static uint64_t lcg_state;

static double lcg_uniform(void) /* in (0, 1) */
{
    lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
    return ((double)(lcg_state >> 11) + 0.5) * 0x1.0p-53;
}

/* Lognormal-ish latencies: median 1 ms, sigma 1.5 in log space, clipped to 10 us .. 10 s. */
static int64_t latency_ns(void)
{
    double z = sqrt(-2 * log(lcg_uniform())) * cos(2 * M_PI * lcg_uniform());
    double v = exp(log(1e6) + 1.5 * z);
    return (int64_t)fmin(fmax(v, 1e4), 1e10);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Percentiles asked of every data set: LoadGen's and a few more, in percent and as LoadGen's
 * fraction literal (100: the maximum). */
static const struct {
    double pct, frac;
} PCTS[] = {
    {0.1, .001}, {1, .01}, {10, .10}, {25, .25}, {50, .50}, {75, .75}, {90, .90},
    {95, .95}, {97, .97}, {99, .99}, {99.9, .999}, {99.99, .9999}, {100, 1},
};

/* LoadGen's pick from sorted[0..n-1]. */
static int64_t loadgen_pick(const int64_t *sorted, size_t n, double frac)
{
    size_t i = frac >= 1 ? n - 1 : (size_t)((double)n * frac);
    return sorted[i];
}

/* Buckets tile 0 .. HIST_MAX_NS - 1 without gaps, each narrower than 1/128 of its low end. */
static void test_bucket_layout(void **state)
{
    (void)state;
    assert_int_equal(hist_bucket_low(0), 0);
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        int64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
        assert_true(lo <= hi);
        assert_int_equal(hist_bucket_of(lo), i);
        assert_int_equal(hist_bucket_of(hi), i);
        if (i + 1 < HIST_BUCKETS)
            assert_int_equal(hist_bucket_low(i + 1), hi + 1);
        if (i < 256)
            assert_int_equal(lo, hi);
        else
            assert_true((hi - lo + 1) * 128 <= lo);
    }
    assert_int_equal(hist_bucket_high(HIST_BUCKETS - 1), HIST_MAX_NS - 1);
    assert_int_equal(hist_bucket_of(-7), 0);
    assert_int_equal(hist_bucket_of(HIST_MAX_NS), HIST_BUCKETS - 1);
    assert_int_equal(hist_bucket_of(INT64_MAX), HIST_BUCKETS - 1);
    assert_int_equal(hist_bucket_low(HIST_BUCKETS), -1);
    /* 256..511 go by twos: 300 and 301 share a bucket, 302 starts the next. */
    assert_int_equal(hist_bucket_of(300), hist_bucket_of(301));
    assert_int_equal(hist_bucket_of(302), hist_bucket_of(301) + 1);
}

/* hist_rank is LoadGen's index + 1, for the literals LoadGen uses, at every n up to 5000;
 * 99.9 in particular, where 99.9 / 100 is not the double 0.999. */
static void test_rank_is_loadgen(void **state)
{
    (void)state;
    for (uint64_t n = 1; n <= 5000; n++)
        for (size_t k = 0; k + 1 < ARRAY_LEN(PCTS); k++)
            assert_int_equal(hist_rank(n, PCTS[k].pct),
                             (uint64_t)((double)n * PCTS[k].frac) + 1);
    assert_int_equal(hist_rank(100, 90), 91); /* not the nearest rank's 90 */
    assert_int_equal(hist_rank(100, 100), 100);
    assert_int_equal(hist_rank(7, 100), 7);
    assert_int_equal(hist_rank(0, 50), 0);
    assert_true(hist_fraction(99.9) == .999);
}

/* Values below 256 ns are exact: every percentile is LoadGen's pick itself. */
static void test_exact_small_values(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 3, 10, 99, 100, 101, 1000, 4097};
    int64_t *v = malloc(4097 * sizeof *v);
    assert_non_null(v);
    struct hist *h = malloc(sizeof *h);
    assert_non_null(h);
    lcg_state = 42;
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t n = sizes[s];
        hist_reset(h);
        for (size_t i = 0; i < n; i++) {
            v[i] = (int64_t)(lcg_uniform() * 256);
            hist_record(h, v[i]);
        }
        qsort(v, n, sizeof *v, cmp_i64);
        for (size_t k = 0; k < ARRAY_LEN(PCTS); k++)
            assert_int_equal(hist_percentile(h, PCTS[k].pct), loadgen_pick(v, n, PCTS[k].frac));
        for (uint64_t r = 1; r <= n; r++)
            assert_int_equal(hist_value_at_rank(h, r), v[r - 1]);
        for (int64_t limit = -1; limit < 257; limit++) {
            uint64_t above = 0;
            for (size_t i = 0; i < n; i++)
                above += v[i] > limit;
            assert_int_equal(hist_count_above(h, limit), above);
        }
    }
    free(h);
    free(v);
}

/* 10^5 lognormal latencies: each percentile within 1/128 above LoadGen's pick and never
 * below; min, max, mean exact; count_above exact at bucket ends, pessimistic between. */
static void test_random_latencies(void **state)
{
    (void)state;
    int64_t *v = malloc(N_RANDOM * sizeof *v);
    struct hist *h = malloc(sizeof *h);
    assert_non_null(v);
    assert_non_null(h);
    hist_reset(h);
    lcg_state = 7;
    double sum = 0;
    for (size_t i = 0; i < N_RANDOM; i++) {
        v[i] = latency_ns();
        sum += (double)v[i];
        hist_record(h, v[i]);
    }
    qsort(v, N_RANDOM, sizeof *v, cmp_i64);
    assert_int_equal(h->total, N_RANDOM);
    assert_int_equal(h->min_ns, v[0]);
    assert_int_equal(h->max_ns, v[N_RANDOM - 1]);
    assert_true(hist_mean(h) == sum / N_RANDOM);
    for (size_t k = 0; k < ARRAY_LEN(PCTS); k++) {
        int64_t want = loadgen_pick(v, N_RANDOM, PCTS[k].frac), got = hist_percentile(h, PCTS[k].pct);
        if (got < want || (double)(got - want) > (double)want / 128) {
            print_error("p%g: got %lld, exact %lld\n", PCTS[k].pct, (long long)got, (long long)want);
            fail();
        }
    }
    /* limits: bucket ends (exact) and the middle of the same buckets (pessimistic) */
    static const int64_t at[] = {10000, 99999, 1000000, 3333333, 123456789, 5000000000};
    for (size_t k = 0; k < ARRAY_LEN(at); k++) {
        size_t b = hist_bucket_of(at[k]);
        int64_t end = hist_bucket_high(b), mid = (hist_bucket_low(b) + end) / 2;
        uint64_t above_end = 0, above_mid = 0, in_bucket = h->counts[b];
        for (size_t i = 0; i < N_RANDOM; i++) {
            above_end += v[i] > end;
            above_mid += v[i] > mid;
        }
        assert_int_equal(hist_count_above(h, end), above_end);
        uint64_t got = hist_count_above(h, mid);
        assert_true(got >= above_mid && got <= above_end + in_bucket);
    }
    assert_int_equal(hist_count_above(h, v[0] - 1), N_RANDOM);
    assert_int_equal(hist_count_above(h, v[N_RANDOM - 1]), 0);
    free(h);
    free(v);
}

/* Merging two halves gives what recording everything into one gives, field for field (the
 * sums are integers below 2^53, so exact in any order). */
static void test_merge(void **state)
{
    (void)state;
    struct hist *a = malloc(sizeof *a), *b = malloc(sizeof *b), *all = malloc(sizeof *all);
    assert_true(a && b && all);
    hist_reset(a);
    hist_reset(b);
    hist_reset(all);
    lcg_state = 99;
    for (int i = 0; i < 20000; i++) {
        int64_t x = latency_ns();
        hist_record(i % 3 ? a : b, x);
        hist_record(all, x);
    }
    hist_merge(a, b);
    assert_memory_equal(a, all, sizeof *all);
    /* into an empty one, and an empty one into it */
    struct hist *e = b;
    hist_reset(e);
    hist_merge(e, all);
    assert_memory_equal(e, all, sizeof *all);
    hist_reset(b);
    hist_merge(a, b);
    assert_memory_equal(a, all, sizeof *all);
    free(a);
    free(b);
    free(all);
}

/* Values at or above HIST_MAX_NS go to the top bucket and `saturated`; a percentile among them
 * reports the exact maximum; negative values count as 0. */
static void test_saturation(void **state)
{
    (void)state;
    struct hist *h = malloc(sizeof *h);
    assert_non_null(h);
    hist_reset(h);
    assert_int_equal(hist_percentile(h, 50), 0);
    assert_true(hist_mean(h) == 0);
    hist_record(h, -5);
    hist_record(h, HIST_MAX_NS - 1);
    hist_record(h, HIST_MAX_NS);
    hist_record(h, 3 * HIST_MAX_NS);
    hist_record(h, INT64_MAX / 2);
    assert_int_equal(h->total, 5);
    assert_int_equal(h->saturated, 3);
    assert_int_equal(h->counts[0], 1);
    assert_int_equal(h->counts[HIST_BUCKETS - 1], 4);
    assert_int_equal(h->min_ns, 0);
    assert_int_equal(h->max_ns, INT64_MAX / 2);
    assert_int_equal(hist_percentile(h, 10), 0);                /* rank 1 */
    assert_int_equal(hist_percentile(h, 30), HIST_MAX_NS - 1);  /* rank 2 */
    assert_int_equal(hist_percentile(h, 50), INT64_MAX / 2);    /* rank 3: saturated */
    assert_int_equal(hist_percentile(h, 100), INT64_MAX / 2);
    assert_int_equal(hist_count_above(h, HIST_MAX_NS - 1), 3);
    assert_int_equal(hist_count_above(h, 5 * HIST_MAX_NS), 3); /* pessimistic */
    assert_int_equal(hist_count_above(h, INT64_MAX / 2), 0);
    free(h);
}

/* Dumps h to text and reads it back; the result must equal h byte for byte. */
static void check_round_trip(const struct hist *h)
{
    json_t *j = hist_to_json(h);
    assert_non_null(j);
    char *text = json_dumps(j, 0);
    json_decref(j);
    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    free(text);
    assert_non_null(back);
    struct hist *r = malloc(sizeof *r);
    assert_non_null(r);
    char err[256] = "";
    if (hist_from_json(r, back, err, sizeof err) != 0) {
        print_error("%s\n", err);
        fail();
    }
    assert_memory_equal(r, h, sizeof *h);
    json_decref(back);
    free(r);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    struct hist *h = malloc(sizeof *h);
    assert_non_null(h);
    hist_reset(h);
    check_round_trip(h);
    hist_record(h, 0);
    check_round_trip(h);
    lcg_state = 3;
    for (int i = 0; i < 50000; i++)
        hist_record(h, latency_ns());
    check_round_trip(h);
    hist_record(h, HIST_MAX_NS + 12345);
    check_round_trip(h);
    json_t *j = hist_to_json(h);
    assert_string_equal(json_string_value(json_object_get(j, "unit")), "ns");
    assert_int_equal(json_integer_value(json_object_get(j, "sub_bucket_bits")), HIST_SUB_BITS);
    assert_int_equal(json_integer_value(json_object_get(j, "total")), 50002);
    json_decref(j);
    free(h);
}

/* Hostile documents: each is refused with a message naming the field, and h left empty. */
static void test_json_hostile(void **state)
{
    (void)state;
#define HEAD "\"unit\": \"ns\", \"sub_bucket_bits\": 8, "
    static const struct {
        const char *doc, *field;
    } cases[] = {
        {"[]", "object"},
        {"{\"sub_bucket_bits\": 8, \"total\": 0, \"saturated\": 0, \"min\": 0, \"max\": 0, "
         "\"sum\": 0, \"buckets\": []}", "unit"},
        {"{\"unit\": \"ms\", \"sub_bucket_bits\": 8, \"total\": 0, \"saturated\": 0, \"min\": 0, "
         "\"max\": 0, \"sum\": 0, \"buckets\": []}", "unit"},
        {"{\"unit\": \"ns\", \"sub_bucket_bits\": 7, \"total\": 0, \"saturated\": 0, \"min\": 0, "
         "\"max\": 0, \"sum\": 0, \"buckets\": []}", "sub_bucket_bits"},
        {"{" HEAD "\"total\": \"1\", \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, 1]]}", "total"},
        {"{" HEAD "\"total\": -1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, 1]]}", "total"},
        {"{" HEAD "\"total\": 1.5, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, 1]]}", "total"},
        {"{" HEAD "\"total\": 1, \"saturated\": 2, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, 1]]}", "saturated"},
        {"{" HEAD "\"total\": 1, \"saturated\": null, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, 1]]}", "saturated"},
        {"{" HEAD "\"total\": 2, \"saturated\": 0, \"min\": 9, \"max\": 5, \"sum\": 14, "
         "\"buckets\": [[5, 5, 1], [9, 9, 1]]}", "min"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": \"5\", "
         "\"buckets\": [[5, 5, 1]]}", "sum"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": -5, "
         "\"buckets\": [[5, 5, 1]]}", "sum"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 7000, "
         "\"buckets\": [[5, 5, 1]]}", "sum"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": {}}", "buckets"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5}",
         "buckets"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 1]]}", "buckets[0]"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [null]}", "buckets[0]"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, \"1\"]]}", "buckets[0]"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[-5, 5, 1]]}", "buckets[0]"},
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 301, \"max\": 301, \"sum\": 301, "
         "\"buckets\": [[301, 302, 1]]}", "buckets[0]"}, /* not on a boundary */
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 300, \"max\": 300, \"sum\": 300, "
         "\"buckets\": [[300, 305, 1]]}", "buckets[0]"}, /* wrong high end */
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[1099511627776, 1099511627776, 1]]}", "buckets[0]"},
        {"{" HEAD "\"total\": 2, \"saturated\": 0, \"min\": 5, \"max\": 9, \"sum\": 14, "
         "\"buckets\": [[9, 9, 1], [5, 5, 1]]}", "buckets[1]"}, /* out of order */
        {"{" HEAD "\"total\": 2, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 10, "
         "\"buckets\": [[5, 5, 1], [5, 5, 1]]}", "buckets[1]"}, /* twice */
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 5, \"max\": 5, \"sum\": 5, "
         "\"buckets\": [[5, 5, 1], [7, 7, 0]]}", "buckets[1]"}, /* empty bucket listed */
        {"{" HEAD "\"total\": 3, \"saturated\": 0, \"min\": 5, \"max\": 9, \"sum\": 19, "
         "\"buckets\": [[5, 5, 1], [9, 9, 1]]}", "total"}, /* counts add up to 2 */
        {"{" HEAD "\"total\": 3, \"saturated\": 0, \"min\": 5, \"max\": 9, \"sum\": 19, "
         "\"buckets\": [[5, 5, 9000000000000000000], [7, 7, 9000000000000000000], "
         "[9, 9, 9000000000000000000]]}", "buckets[2]"}, /* overflow */
        {"{" HEAD "\"total\": 2, \"saturated\": 0, \"min\": 6, \"max\": 9, \"sum\": 14, "
         "\"buckets\": [[5, 5, 1], [9, 9, 1]]}", "min"}, /* min not in the first bucket */
        {"{" HEAD "\"total\": 1, \"saturated\": 0, \"min\": 1099511627777, "
         "\"max\": 1099511627777, \"sum\": 1099511627777, "
         "\"buckets\": [[1095216660480, 1099511627775, 1]]}", "saturated"},
        {"{" HEAD "\"total\": 2, \"saturated\": 1, \"min\": 5, \"max\": 1099511627777, "
         "\"sum\": 1099511627782, \"buckets\": [[5, 5, 2]]}", "max"},
    };
#undef HEAD
    struct hist *h = malloc(sizeof *h);
    assert_non_null(h);
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        json_error_t je;
        json_t *j = json_loads(cases[c].doc, 0, &je);
        if (!j) {
            print_error("case %zu does not parse: %s\n", c, je.text);
            fail();
        }
        char err[256] = "";
        hist_record(h, 1234); /* must be emptied by the failure */
        int rc = hist_from_json(h, j, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[c].field)) {
            print_error("case %zu: rc %d, message \"%s\", want one naming %s\n", c, rc, err,
                        cases[c].field);
            fail();
        }
        assert_int_equal(h->total, 0);
        json_decref(j);
    }
    free(h);
}

/* Every integer of a valid document replaced by hostile values: never a crash (run under
 * ASan/UBSan), and whatever is accepted is consistent. */
static void test_json_mutations(void **state)
{
    (void)state;
    struct hist *h = malloc(sizeof *h);
    assert_non_null(h);
    hist_reset(h);
    hist_record(h, 3);
    hist_record(h, 700);
    hist_record(h, 4000000);
    hist_record(h, HIST_MAX_NS + 1);
    json_t *good = hist_to_json(h);
    static const json_int_t evil[] = {-1, 0, 1, 2, 255, 256, 257, 1099511627775,
                                      1099511627776, INT64_MAX, INT64_MIN};
    static const char *const keys[] = {"total", "saturated", "min", "max", "sum"};
    char err[256];
    for (size_t k = 0; k < ARRAY_LEN(keys); k++)
        for (size_t e = 0; e < ARRAY_LEN(evil); e++) {
            json_t *j = json_deep_copy(good);
            json_object_set_new(j, keys[k], json_integer(evil[e]));
            if (hist_from_json(h, j, err, sizeof err) == 0) {
                uint64_t sum = 0;
                for (size_t i = 0; i < HIST_BUCKETS; i++)
                    sum += h->counts[i];
                assert_int_equal(sum, h->total);
                (void)hist_percentile(h, 99);
            }
            json_decref(j);
        }
    size_t nb = json_array_size(json_object_get(good, "buckets"));
    for (size_t b = 0; b < nb; b++)
        for (size_t f = 0; f < 3; f++)
            for (size_t e = 0; e < ARRAY_LEN(evil); e++) {
                json_t *j = json_deep_copy(good);
                json_t *bucket = json_array_get(json_object_get(j, "buckets"), b);
                json_array_set_new(bucket, f, json_integer(evil[e]));
                if (hist_from_json(h, j, err, sizeof err) == 0) {
                    (void)hist_percentile(h, 50);
                    (void)hist_count_above(h, 1000);
                }
                json_decref(j);
            }
    json_decref(good);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_layout),
        cmocka_unit_test(test_rank_is_loadgen),
        cmocka_unit_test(test_exact_small_values),
        cmocka_unit_test(test_random_latencies),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_hostile),
        cmocka_unit_test(test_json_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
