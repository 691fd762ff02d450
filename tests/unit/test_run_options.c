/* Unit tests of run_options_parse: defaults, every option, and the error messages of bad
 * input (each must name the bad value). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_options.h"
#include "result/price.h"

static char err[1024];

/* Parses a NULL-terminated list of arguments after "run". */
static int parse(struct run_options *o, char **args)
{
    static char *argv[64]; /* static: o points into it after parse returns */
    memset(argv, 0, sizeof argv);
    argv[0] = "run";
    int argc = 1;
    while (args[argc - 1])
        argv[argc] = args[argc - 1], argc++;
    err[0] = '\0';
    return run_options_parse(argc, argv, o, err, sizeof err);
}

#define PARSE(o, ...) parse(o, (char *[]){__VA_ARGS__, NULL})

static void write_help(const struct cli_parser *p, void *arg)
{
    cli_help_write(arg, p);
}

/* What `mlbench run --help` prints (the parser handed to a collector, written to memory), to
 * be freed. */
static char *help_text(void)
{
    char *text;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    struct run_options c;
    cli_options_collect(write_help, out);
    assert_int_equal(PARSE(&c, "--help"), RUN_OPTIONS_HELP);
    cli_options_collect(NULL, NULL);
    run_options_free(&c);
    assert_int_equal(fclose(out), 0);
    return text;
}

static void test_defaults(void **state)
{
    (void)state;
    struct run_options c;
    unsetenv("MLBENCH_STORE");
    assert_int_equal(PARSE(&c, "--", "python", "train.py", "--lr", "0.1"), 0);
    assert_int_equal(c.run.argc, 4);
    assert_string_equal(c.run.argv[0], "python");
    assert_string_equal(c.run.argv[2], "--lr");
    assert_int_equal(c.run.runs, 0);
    assert_int_equal(c.run.warmup, 0);
    assert_true(c.run.timeout_s == 0);
    assert_true(c.run.grace_s == RUN_DEFAULT_GRACE);
    assert_string_equal(c.session.store, ".mlbench");
    assert_false(c.run.shell || c.session.quiet || c.json || c.run.fail_fast || c.run.show_output);
    /* without "--" the command starts at the first non-option; later options are its own */
    assert_int_equal(PARSE(&c, "-r", "3", "sleep", "-r", "1"), 0);
    assert_int_equal(c.run.runs, 3);
    assert_int_equal(c.run.argc, 3);
    setenv("MLBENCH_STORE", "/tmp/elsewhere", 1);
    assert_int_equal(PARSE(&c, "--", "true"), 0);
    assert_string_equal(c.session.store, "/tmp/elsewhere");
    unsetenv("MLBENCH_STORE");
}

static void test_all_options(void **state)
{
    (void)state;
    struct run_options c;
    assert_int_equal(PARSE(&c, "-r", "5", "-w", "2", "--timeout", "1.5m", "--grace", "500ms",
                           "--prepare", "sync", "--cleanup", "rm -f x", "-l", "baseline", "-o",
                           "/tmp/out.json", "--store", "/tmp/s", "-q", "--json", "--fail-fast",
                           "--shell", "--show-output", "--", "cmd"), 0);
    assert_int_equal(c.run.runs, 5);
    assert_int_equal(c.run.warmup, 2);
    assert_true(c.run.timeout_s == 90);
    assert_true(c.run.grace_s == 0.5);
    assert_string_equal(c.run.prepare, "sync");
    assert_string_equal(c.run.cleanup, "rm -f x");
    assert_string_equal(c.run.label, "baseline");
    assert_string_equal(c.session.output, "/tmp/out.json");
    assert_string_equal(c.session.store, "/tmp/s");
    assert_true(c.session.quiet && c.json && c.run.fail_fast && c.run.shell && c.run.show_output);
    assert_int_equal(PARSE(&c, "--runs=7", "--warmup=0", "--", "x"), 0);
    assert_int_equal(c.run.runs, 7);
    assert_int_equal(PARSE(&c, "--help"), RUN_OPTIONS_HELP);
    /* No command: accepted; cmd_run runs the default workflow. */
    assert_int_equal(PARSE(&c, "-r", "3"), 0);
    assert_int_equal(c.run.argc, 0);
    assert_null(c.run.argv);
    char *help = help_text();
    assert_non_null(strstr(help, "--timeout"));
    free(help);
}

static void expect_error(char **args, const char *needle)
{
    struct run_options c;
    assert_int_equal(parse(&c, args), -1);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not contain '%s'", err, needle);
}

#define ERROR(needle, ...) expect_error((char *[]){__VA_ARGS__, NULL}, needle)

static void test_errors(void **state)
{
    (void)state;
    ERROR("unknown option '--nope'", "--nope", "--", "x");
    ERROR("unknown option '-z'", "-z", "--", "x");
    ERROR("empty string", "--", "");
    ERROR("--runs '0' is not a whole number from 1", "-r", "0", "--", "x");
    ERROR("--runs '-2'", "-r", "-2", "--", "x");
    ERROR("--runs '3x'", "-r", "3x", "--", "x");
    ERROR("--runs '99999999999'", "-r", "99999999999", "--", "x");
    ERROR("--warmup 'many'", "-w", "many", "--", "x");
    ERROR("--timeout '-1' is not a positive duration", "--timeout", "-1", "--", "x");
    ERROR("--timeout 'abc'", "--timeout", "abc", "--", "x");
    ERROR("--timeout '0'", "--timeout", "0", "--", "x");
    ERROR("--timeout '5parsecs'", "--timeout", "5parsecs", "--", "x");
    ERROR("--timeout 'nan'", "--timeout", "nan", "--", "x");
    ERROR("--grace 'inf'", "--grace", "inf", "--", "x");
    ERROR("--label is empty", "-l", "", "--", "x");
    ERROR("--prepare is empty", "--prepare", "  ", "--", "x");
    ERROR("--store is empty", "--store", "", "--", "x");
    ERROR("needs a value", "-r");
    ERROR("needs a value", "--timeout");
    ERROR("directory '/nonexistent-mlbench' does not exist", "-o", "/nonexistent-mlbench/r.json",
          "--", "x");
    ERROR("is a directory", "-o", "/tmp", "--", "x");
    ERROR("output file is empty", "-o", "", "--", "x");
}

/* A parameter given twice was kept silently with its last value (issue 13). */
static void test_param_twice(void **state)
{
    (void)state;
    struct run_options c;
    assert_int_equal(PARSE(&c, "--param", "d=0.05", "--param", "dd=1", "wf.yaml"), 0);
    assert_int_equal(c.params.n, 2);
    strvec_free(&c.params);
    assert_int_equal(PARSE(&c, "--param", "d=0.05", "--param", "x=1", "--param", "d=0.1",
                           "wf.yaml"), -1);
    assert_string_equal(err, "--param 'd' is given twice (d=0.05, then d=0.1): give each "
                             "parameter once");
    strvec_free(&c.params);
}

static void test_price(void **state)
{
    (void)state;
    struct run_options c;
    assert_int_equal(PARSE(&c, "--price", "2.5 eur", "--", "true"), 0);
    assert_non_null(c.session.price);
    assert_true(c.session.price->per_hour == 2.5);
    assert_string_equal(c.session.price->currency, "EUR");
    assert_null(c.session.price->file);
    run_options_free(&c);
    assert_null(c.session.price);
    assert_int_equal(PARSE(&c, "--", "true"), 0);
    assert_null(c.session.price); /* not priced */
    run_options_free(&c);
    assert_int_equal(PARSE(&c, "--price", "free", "--", "true"), -1);
    assert_string_equal(err, "--price 'free' is not a price per hour: give a number above 0 (at "
                             "most 1e+09), optionally with a currency code, e.g. 3.50, 3.5USD, "
                             "'2.1 EUR'");
    run_options_free(&c);
    assert_int_equal(PARSE(&c, "--price", "1", "--price-file", "p.yaml", "--", "true"), -1);
    assert_non_null(strstr(err, "given already"));
    run_options_free(&c);
    assert_int_equal(PARSE(&c, "--price-file", "/nonexistent/p.yaml", "--", "true"), -1);
    assert_non_null(strstr(err, "--price-file: cannot read price file '/nonexistent/p.yaml'"));
    run_options_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_all_options),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_param_twice),
        cmocka_unit_test(test_price),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
