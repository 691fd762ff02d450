/* Unit tests of units: readable durations and sizes, strict number parsing, UTF-8 checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

static void test_duration(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_duration(0, b, sizeof b), "0 ns");
    assert_string_equal(units_duration(999, b, sizeof b), "999 ns");
    assert_string_equal(units_duration(1500, b, sizeof b), "1.500 us");
    assert_string_equal(units_duration(812345, b, sizeof b), "812.3 us");
    assert_string_equal(units_duration(50.25e6, b, sizeof b), "50.25 ms");
    assert_string_equal(units_duration(1.2044e9, b, sizeof b), "1.204 s");
    assert_string_equal(units_duration(59.99e9, b, sizeof b), "59.99 s");
    assert_string_equal(units_duration(123.4e9, b, sizeof b), "2 min 03.4 s");
    assert_string_equal(units_duration(NAN, b, sizeof b), "-");
    /* minutes beyond a long (fuzz_options found the cast): printed, not undefined */
    assert_string_equal(units_duration(6e29, b, sizeof b), "10000000000000000000 min 00.0 s");
}

static void test_bytes(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_bytes(512, b, sizeof b), "512 B");
    assert_string_equal(units_bytes(1536, b, sizeof b), "1.500 KiB");
    assert_string_equal(units_bytes(3.5 * 1024 * 1024, b, sizeof b), "3.500 MiB");
    assert_string_equal(units_bytes(200.0 * 1024 * 1024 * 1024, b, sizeof b), "200.0 GiB");
}

static void test_parse(void **state)
{
    (void)state;
    long v;
    double s;
    assert_int_equal(units_parse_long("42", 1, 100, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(units_parse_long("0", 1, 100, &v), -1);
    assert_int_equal(units_parse_long("101", 1, 100, &v), -1);
    assert_int_equal(units_parse_long("4x", 1, 100, &v), -1);
    assert_int_equal(units_parse_long("", 1, 100, &v), -1);
    assert_int_equal(units_parse_long("99999999999999999999", 1, 100, &v), -1);
    assert_int_equal(units_parse_seconds("2.5", &s), 0);
    assert_true(s == 2.5);
    assert_int_equal(units_parse_seconds("150ms", &s), 0);
    assert_true(fabs(s - 0.15) < 1e-12);
    assert_int_equal(units_parse_seconds("10m", &s), 0);
    assert_true(s == 600);
    assert_int_equal(units_parse_seconds("1h", &s), 0);
    assert_true(s == 3600);
    assert_int_equal(units_parse_seconds("-1", &s), -1);
    /* finite as a number, infinite once scaled: refused, never inf */
    assert_int_equal(units_parse_seconds("1e308h", &s), -1);
    assert_int_equal(units_parse_seconds("1e307min", &s), -1);
    assert_int_equal(units_parse_seconds("1e308ms", &s), 0);
    assert_int_equal(units_parse_seconds("1 s", &s), -1);
    assert_int_equal(units_parse_seconds("inf", &s), -1);
    assert_int_equal(units_parse_seconds("ms", &s), -1);
    assert_int_equal(units_parse_seconds("3d", &s), -1);
}

static void test_utf8(void **state)
{
    (void)state;
    assert_true(units_utf8_valid("plain", 5));
    assert_true(units_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
    assert_false(units_utf8_valid("\xc3", 1));          /* truncated */
    assert_false(units_utf8_valid("\xc0\x80", 2));      /* overlong NUL */
    assert_false(units_utf8_valid("\xed\xa0\x80", 3));  /* surrogate */
    assert_false(units_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
    char *s = units_utf8_sanitize("a\xff\xc3\xa9z\xe2\x82", 7);
    assert_string_equal(s, "a?\xc3\xa9z??");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
