/* Unit tests of src/util/term.c: what reaches a terminal from a workload or a result file cannot
 * drive it (C0, DEL, C1, invalid UTF-8, bidi controls), and table cells are cut by columns at
 * character boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/term.h"

static char *clean(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(term_clean(f, s, strlen(s)), 0);
    fclose(f);
    return buf;
}

static void test_clean(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"plain text\nnext line", "plain text\nnext line"},
        {"title\x1b]0;owned\x07 x", "title?]0;owned? x"},      /* OSC: ESC and BEL */
        {"\x1b[2Jcleared", "?[2Jcleared"},                     /* CSI */
        {"c1 \xc2\x9b" "31m", "c1 ?31m"},                       /* U+009B, the 8-bit CSI */
        {"del\x7f tab\t cr\r", "del? tab? cr?"},
        {"bidi \xe2\x80\xae" "txt.exe", "bidi ?txt.exe"},      /* U+202E RIGHT-TO-LEFT OVERRIDE */
        {"iso \xe2\x81\xa6x\xe2\x81\xa9", "iso ?x?"},          /* U+2066, U+2069 */
        {"bad \xff\xfe utf8", "bad ?? utf8"},
        {"\xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xe6\x97\xa5", "\xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xe6\x97\xa5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = clean(cases[i][0]);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
}

static void test_fit(void **state)
{
    (void)state;
    char buf[128];
    assert_int_equal(term_cols("abc"), 3);
    assert_int_equal(term_cols("\xc3\xa9t\xc3\xa9"), 3);        /* é t é */
    assert_int_equal(term_cols("\xe6\x97\xa5\xe6\x9c\xac"), 4); /* 日本: wide */
    assert_string_equal(term_fit("short", 10, buf, sizeof buf), "short");
    assert_string_equal(term_fit("abcdefghij", 5, buf, sizeof buf), "abcd\xe2\x80\xa6");
    /* never inside a character: 日本語 in 5 columns is 日本 and the ellipsis */
    assert_string_equal(term_fit("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, buf, sizeof buf),
                        "\xe6\x97\xa5\xe6\x9c\xac\xe2\x80\xa6");
    assert_string_equal(term_fit("a\nb", 10, buf, sizeof buf), "a?b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
