/* Unit tests of src/measure/cmdline.c: what only a shell understands is found where the shell
 * would see it (outside quotes; in double quotes only substitution and variables), and a
 * command string with it is refused, never split into other words than meant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "measure/cmdline.h"

static enum cmdline_shellism kind(const char *s, bool variables_ok)
{
    char found;
    return cmdline_shellism(s, variables_ok, &found);
}

static void test_shellisms(void **state)
{
    (void)state;
    assert_int_equal(kind("python3 train.py --lr 0.1", false), CMDLINE_PLAIN);
    assert_int_equal(kind("echo 'a;b|c*' \"d&e?\" f\\;g \\*", false), CMDLINE_PLAIN);
    assert_int_equal(kind("a~b x=~", false), CMDLINE_PLAIN); /* ~ only starting a word */
    /* the data-loss case: the pattern comes first, the operator after it in the same word */
    char found;
    assert_int_equal(cmdline_shellism("rm -f cache/*; cat keep.txt", false, &found),
                     CMDLINE_PATTERN);
    assert_int_equal(found, '*');
    assert_int_equal(cmdline_shellism("rm -f cache/x; cat keep.txt", false, &found),
                     CMDLINE_OPERATOR);
    assert_int_equal(found, ';');
    const char *operators[] = {"a | b", "a & b", "a > f", "a < f", "(a)", "{ a; }", "a\nb",
                               "a \\\nb"};
    for (size_t i = 0; i < sizeof operators / sizeof operators[0]; i++)
        assert_int_equal(kind(operators[i], false), CMDLINE_OPERATOR);
    const char *patterns[] = {"ls *.c", "ls ?", "ls [ab]", "ls ~/x", "ls ~", "a ]"};
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        assert_int_equal(kind(patterns[i], false), CMDLINE_PATTERN);
    assert_int_equal(kind("echo `id`", false), CMDLINE_SUBST);
    assert_int_equal(kind("echo \"$(id)\"", true), CMDLINE_SUBST);
    assert_int_equal(kind("echo '$(id)'", false), CMDLINE_PLAIN);
    /* variables: refused for mlbench run, allowed for workflows (which expand them) */
    assert_int_equal(kind("echo $HOME", false), CMDLINE_VARIABLE);
    assert_int_equal(kind("echo \"$HOME\"", false), CMDLINE_VARIABLE);
    assert_int_equal(kind("echo $HOME ${DATA}/x \"$A\"", true), CMDLINE_PLAIN);
    assert_int_equal(kind("echo ${DATA", true), CMDLINE_OPERATOR);
}

static void test_split(void **state)
{
    (void)state;
    struct cmdline c;
    char err[512];
    assert_int_equal(cmdline_split(&c, "--prepare", "touch 'a b' \"c;d\" e\\*", false, err,
                                   sizeof err), 0);
    assert_string_equal(c.argv[0], "touch");
    assert_string_equal(c.argv[1], "a b");
    assert_string_equal(c.argv[2], "c;d");
    assert_string_equal(c.argv[3], "e*");
    assert_null(c.argv[4]);
    cmdline_free(&c);

    assert_int_equal(cmdline_split(&c, "--cleanup", "rm -f cache/*; cat keep.txt", false, err,
                                   sizeof err), -1);
    assert_non_null(strstr(err, "--cleanup 'rm -f cache/*; cat keep.txt' holds '*', a pattern"));
    assert_non_null(strstr(err, "add --shell"));
    assert_int_equal(cmdline_split(&c, "--cleanup", "a\nb", false, err, sizeof err), -1);
    assert_non_null(strstr(err, "holds a shell operator (a line break)"));
    assert_int_equal(cmdline_split(&c, "--prepare", "'open", false, err, sizeof err), -1);
    assert_non_null(strstr(err, "syntax error"));
    assert_int_equal(cmdline_split(&c, "--prepare", "   ", false, err, sizeof err), -1);
    assert_non_null(strstr(err, "has no words"));

    /* with --shell the string goes to /bin/sh as it is */
    assert_int_equal(cmdline_split(&c, "--prepare", "rm -f cache/*; ls", true, err, sizeof err), 0);
    assert_string_equal(c.argv[0], "/bin/sh");
    assert_string_equal(c.argv[2], "rm -f cache/*; ls");
    cmdline_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shellisms),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
