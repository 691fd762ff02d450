/* Unit tests of marker_parse: valid events of every kind, malformed and overlong datagrams. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "measure/marker_parse.h"

static const char *parse(const char *s, struct marker_token *t)
{
    return marker_parse(s, strlen(s), t);
}

static void test_begin_end_instant(void **state)
{
    (void)state;
    struct marker_token t;
    assert_null(parse("B 123456789 42 43 load", &t));
    assert_int_equal(t.kind, 'B');
    assert_int_equal(t.t_ns, 123456789);
    assert_int_equal(t.pid, 42);
    assert_int_equal(t.tid, 43);
    assert_int_equal(t.name_len, 4);
    assert_memory_equal(t.name, "load", 4);
    assert_null(t.value);
    assert_null(parse("E 1 1 1 load", &t));
    assert_int_equal(t.kind, 'E');
    assert_null(parse("I 1 1 1 checkpoint", &t));
    assert_int_equal(t.kind, 'I');
    /* UTF-8 names are fine */
    assert_null(parse("B 1 1 1 pr\xc3\xa9traitement", &t));
    assert_int_equal(t.name_len, strlen("pr\xc3\xa9traitement"));
}

static void test_counter(void **state)
{
    (void)state;
    struct marker_token t;
    assert_null(parse("C 5 1 2 loss 0.125", &t));
    assert_int_equal(t.kind, 'C');
    assert_true(t.number == 0.125);
    assert_null(parse("C 5 1 2 images 1e6", &t));
    assert_true(t.number == 1e6);
    assert_null(parse("C 5 1 2 x -3", &t));
    assert_true(t.number == -3);
    assert_null(parse("C 5 1 2 loss nan", &t)); /* a diverged loss is data, not an error */
    assert_string_equal(parse("C 5 1 2 loss", &t), "counter without value");
    assert_string_equal(parse("C 5 1 2 loss ", &t), "counter without value");
    assert_string_equal(parse("C 5 1 2 loss abc", &t), "bad counter value");
    assert_string_equal(parse("C 5 1 2 loss 1.5x", &t), "bad counter value");
    assert_string_equal(parse("C 5 1 2 loss 1e999", &t), "bad counter value");
}

static void test_meta(void **state)
{
    (void)state;
    struct marker_token t;
    assert_null(parse("M 5 1 2 model resnet 50 v2", &t));
    assert_int_equal(t.kind, 'M');
    assert_int_equal(t.value_len, strlen("resnet 50 v2"));
    assert_memory_equal(t.value, "resnet 50 v2", t.value_len);
    assert_null(parse("M 5 1 2 empty", &t));
    assert_int_equal(t.value_len, 0);
    assert_non_null(t.value);
    assert_string_equal(parse("M 5 1 2 k a\tb", &t), "control character in value");
    assert_string_equal(parse("M 5 1 2 k \xff", &t), "value is not UTF-8");
}

static void test_malformed(void **state)
{
    (void)state;
    struct marker_token t;
    assert_string_equal(marker_parse("", 0, &t), "empty");
    assert_string_equal(parse("B", &t), "bad kind");
    assert_string_equal(parse("BB 1 1 1 x", &t), "bad kind");
    assert_string_equal(parse("Z 1 1 1 x", &t), "unknown kind");
    assert_string_equal(parse("B x 1 1 name", &t), "bad timestamp");
    assert_string_equal(parse("B -1 1 1 name", &t), "bad timestamp");
    assert_string_equal(parse("B 99999999999999999999 1 1 name", &t), "bad timestamp");
    assert_string_equal(parse("B 1 0 1 name", &t), "bad pid");
    assert_string_equal(parse("B 1 1 x name", &t), "bad tid");
    assert_string_equal(parse("B 1 1 1", &t), "bad tid");
    assert_string_equal(parse("B 1 1 1 ", &t), "empty name");
    assert_string_equal(parse("B 1 1 1 a\x01" "b", &t), "control character in name");
    assert_string_equal(parse("B 1 1 1 \xc3(", &t), "name is not UTF-8");
    assert_string_equal(parse("B 1 1 1 \xed\xa0\x80", &t), "name is not UTF-8"); /* surrogate */
    assert_string_equal(parse("B 1 1 1 \xc0\xaf", &t), "name is not UTF-8");     /* overlong */
    assert_string_equal(parse("B 1 1 1 load extra", &t), "unexpected value");
    assert_string_equal(parse("B  1 1 1 load", &t), "bad timestamp");
}

static void test_overlong(void **state)
{
    (void)state;
    struct marker_token t;
    char buf[MARKER_MAX_EVENT + 2];
    memset(buf, 'x', sizeof buf);
    memcpy(buf, "B 1 1 1 ", 8);
    assert_null(marker_parse(buf, MARKER_MAX_EVENT, &t)); /* exactly at the limit */
    assert_int_equal(t.name_len, MARKER_MAX_EVENT - 8);
    assert_string_equal(marker_parse(buf, MARKER_MAX_EVENT + 1, &t), "overlong");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_begin_end_instant),
        cmocka_unit_test(test_counter),
        cmocka_unit_test(test_meta),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_overlong),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
