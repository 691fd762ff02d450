/* Unit tests of cli_options_parse (src/cli/options.c): every kind of option, its ranges and
 * flags, the messages of bad input (each must name the option and the value), --help, the two
 * argument modes, and a table shaped like `mlbench run`'s (what run_options.c will use). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "util/term.h"

static char err[1024];
static char *argv_store[64]; /* static: the values point into it after a parse */

/* Parses a NULL-terminated list of arguments after the verb "test". */
static int parse(const struct cli_option *table, unsigned flags, struct cli_args *args,
                 char **list)
{
    memset(argv_store, 0, sizeof argv_store);
    argv_store[0] = "test";
    int argc = 1;
    while (list[argc - 1])
        argv_store[argc] = list[argc - 1], argc++;
    err[0] = '\0';
    const struct cli_parser p = {.verb = "test", .options = table,
                                 .flags = flags, .usage = "Usage: mlbench test\n"};
    struct cli_args unused;
    return cli_options_parse(&p, argc, argv_store, args ? args : &unused, err, sizeof err);
}

#define PARSE(table, flags, args, ...) parse(table, flags, args, (char *[]){__VA_ARGS__, NULL})

static void expect_error(const char *needle, const struct cli_option *table, unsigned flags,
                         char **list)
{
    assert_int_equal(parse(table, flags, NULL, list), CLI_ERROR);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not contain '%s'", err, needle);
}

#define ERROR(needle, table, ...) expect_error(needle, table, 0, (char *[]){__VA_ARGS__, NULL})

struct all {
    bool flag;
    const char *name, *blank;
    struct strvec many;
    int i;
    unsigned u;
    long l;
    size_t z;
    uint64_t seed;
    double x, pct, open, sec;
    int64_t ns;
};

static void table_of(struct all *a, struct cli_option *t)
{
    const struct cli_option rows[] = {
        CLI_OPT_FLAG("flag", 'f', &a->flag),
        CLI_OPT_STRING("name", 'n', &a->name, CLI_NONEMPTY, "is empty: give a name"),
        CLI_OPT_STRING("blank", 0, &a->blank, CLI_NOT_BLANK, NULL),
        CLI_OPT_STRINGS("many", 'm', &a->many, 0, NULL, NULL),
        CLI_OPT_INTEGER("int", 'i', &a->i, -5, 5, 0, NULL),
        CLI_OPT_INTEGER("unsigned", 0, &a->u, 100, 10000000, 0, NULL),
        CLI_OPT_INTEGER("long", 0, &a->l, 0, 1000000, 0, "is not a run index"),
        CLI_OPT_INTEGER("size", 0, &a->z, 1, 100000000, 0, NULL),
        CLI_OPT_INTEGER("seed", 0, &a->seed, 0, INT64_MAX, CLI_C_INTEGER, NULL),
        CLI_OPT_NUMBER("x", 0, &a->x, 0, 100, 0, NULL),
        CLI_OPT_NUMBER("pct", 0, &a->pct, 0, INFINITY, CLI_PERCENT, NULL),
        CLI_OPT_NUMBER("open", 0, &a->open, 0, 1, CLI_OPEN_MIN | CLI_OPEN_MAX, NULL),
        CLI_OPT_SECONDS("sec", 0, &a->sec, 0, 3600, CLI_OPEN_MIN, NULL),
        CLI_OPT_NANOSECONDS("ns", 0, &a->ns, 10000000, 10000000000LL, NULL),
        CLI_OPT_END,
    };
    memcpy(t, rows, sizeof rows);
}

#define N_ROWS 15

static void test_every_kind(void **state)
{
    (void)state;
    struct all a = {0};
    struct cli_option t[N_ROWS];
    table_of(&a, t);
    struct cli_args args;
    assert_int_equal(PARSE(t, 0, &args, "-f", "--name", "n1", "--blank=b", "-m", "a=1",
                           "--many", "b=2", "-i", "-5", "--unsigned", "100", "--long=1000000",
                           "--size", "7", "--seed", "0x6d6c62656e6368", "--x", "2.5", "--pct",
                           "5%", "--open", "0.05", "--sec", "1.5m", "--ns", "250ms", "rest"),
                     CLI_OK);
    assert_true(a.flag);
    assert_string_equal(a.name, "n1");
    assert_string_equal(a.blank, "b");
    assert_int_equal(a.many.n, 2);
    assert_string_equal(a.many.v[0], "a=1");
    assert_string_equal(a.many.v[1], "b=2");
    assert_null(a.many.v[2]);
    assert_int_equal(a.i, -5);
    assert_int_equal(a.u, 100);
    assert_int_equal(a.l, 1000000);
    assert_int_equal(a.z, 7);
    assert_true(a.seed == UINT64_C(0x6d6c62656e6368));
    assert_true(a.x == 2.5);
    assert_true(a.pct == 5);
    assert_true(a.open == 0.05);
    assert_true(a.sec == 90);
    assert_true(a.ns == 250000000);
    assert_int_equal(args.n, 1);
    assert_string_equal(args.v[0], "rest");
    strvec_free(&a.many);

    /* only what was given is written: defaults stay */
    struct all b = {.i = 3, .name = "default"};
    table_of(&b, t);
    assert_int_equal(PARSE(t, 0, &args, "--flag"), CLI_OK);
    assert_int_equal(b.i, 3);
    assert_string_equal(b.name, "default");
    assert_null(b.many.v);
    assert_int_equal(args.n, 0);
    /* the ends of closed ranges are in, of open ones out */
    assert_int_equal(PARSE(t, 0, NULL, "--x", "0", "--x", "100", "--pct", "0", "--ns", "10s"),
                     CLI_OK);
    assert_true(b.x == 100 && b.pct == 0 && b.ns == 10000000000LL);
    assert_int_equal(PARSE(t, 0, NULL, "--seed", "9223372036854775807"), CLI_OK);
    assert_true(b.seed == INT64_MAX);
    assert_int_equal(PARSE(t, 0, NULL, "--seed", "010"), CLI_OK); /* C: octal */
    assert_true(b.seed == 8);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct all a = {0};
    struct cli_option t[N_ROWS];
    table_of(&a, t);
    ERROR("--name is empty: give a name", t, "--name", "");
    ERROR("--blank is empty: give a value", t, "--blank", " \t ");
    ERROR("--int '6' is not a whole number from -5 to 5", t, "-i", "6");
    ERROR("--int '1.5' is not a whole number from -5 to 5", t, "--int", "1.5");
    ERROR("--int '' is not", t, "--int", "");
    ERROR("--unsigned '99' is not a whole number from 100 to 10000000", t, "--unsigned", "99");
    ERROR("--long '-1' is not a run index", t, "--long", "-1");
    ERROR("--size '99999999999999999999' is not", t, "--size", "99999999999999999999");
    ERROR("--seed '-1' is not a whole number from 0 to 9223372036854775807", t, "--seed", "-1");
    ERROR("--seed '-0'", t, "--seed", "-0");
    ERROR("--seed '0x8000000000000000'", t, "--seed", "0x8000000000000000");
    ERROR("--x '100.5' is not a number from 0 to 100", t, "--x", "100.5");
    ERROR("--x '5%' is not", t, "--x", "5%");
    ERROR("--x 'nan'", t, "--x", "nan");
    ERROR("--pct 'inf'", t, "--pct", "inf");
    ERROR("--pct '-1'", t, "--pct", "-1");
    ERROR("--pct '5%%'", t, "--pct", "5%%");
    ERROR("--open '0'", t, "--open", "0");
    ERROR("--open '1'", t, "--open", "1");
    ERROR("--sec '0' is not a duration", t, "--sec", "0");
    ERROR("--sec '2h'", t, "--sec", "2h");
    ERROR("--sec '5parsecs'", t, "--sec", "5parsecs");
    ERROR("--ns '9ms'", t, "--ns", "9ms");
    ERROR("--ns '11s'", t, "--ns", "11s");
    ERROR("--ns '-1'", t, "--ns", "-1");
}

static void test_usage_errors(void **state)
{
    (void)state;
    struct all a = {0};
    struct cli_option t[N_ROWS];
    table_of(&a, t);
    ERROR("unknown option '--nope' (see mlbench test --help)", t, "--nope");
    ERROR("unknown option '-z' (see mlbench test --help)", t, "-z");
    ERROR("unknown option '-z'", t, "-fz"); /* in a cluster: the option, not the argument */
    ERROR("unknown option '--flag=1'", t, "--flag=1");
    ERROR("option '--int' needs a value (see mlbench test --help)", t, "--int");
    ERROR("option '-i' needs a value", t, "-i");
    assert_int_equal(PARSE(t, CLI_NO_ARGS, NULL, "--flag", "extra"), CLI_ERROR);
    assert_string_equal(err, "unexpected argument 'extra' (see mlbench test --help)");
    assert_int_equal(PARSE(t, 0, NULL, "--help"), CLI_HELP);
    assert_int_equal(PARSE(t, 0, NULL, "x", "-h"), CLI_HELP);
    /* the first error stops the parse */
    assert_int_equal(PARSE(t, 0, NULL, "--int", "9", "--help"), CLI_ERROR);
}

/* --color is every command's: it sets the terminal's colour, and a bad value is refused. */
static void test_color(void **state)
{
    (void)state;
    struct all a = {0};
    struct cli_option t[N_ROWS];
    table_of(&a, t);
    setenv("NO_COLOR", "1", 1);
    assert_int_equal(PARSE(t, 0, NULL, "--color", "always", "--flag"), CLI_OK);
    assert_true(a.flag);
    assert_true(term_color_on(stdout)); /* asked for: NO_COLOR does not override it */
    assert_int_equal(PARSE(t, 0, NULL, "--color=never"), CLI_OK);
    assert_false(term_color_on(stdout));
    assert_string_equal(term_tone_start(stdout, TERM_TONE_BAD), "");
    assert_int_equal(PARSE(t, 0, NULL, "--color", "auto"), CLI_OK);
    assert_false(term_color_on(stdout)); /* NO_COLOR set */
    unsetenv("NO_COLOR");
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_false(term_color_on(f)); /* auto: not a terminal */
    fclose(f);
    ERROR("--color 'sometimes' is not auto, always or never", t, "--color", "sometimes");
    term_color_set(TERM_COLOR_AUTO);
}

static struct cli_parser collected; /* a copy: the parser itself is gone after the parse */
static void collect(const struct cli_parser *p, void *arg)
{
    collected = *p;
    ++*(int *)arg;
}

/* --help hands the parser to a collector instead of printing (mlbench completion). */
static void test_collect(void **state)
{
    (void)state;
    struct all a = {0};
    struct cli_option t[N_ROWS];
    table_of(&a, t);
    int calls = 0;
    cli_options_collect(collect, &calls);
    assert_int_equal(PARSE(t, 0, NULL, "--flag", "--help"), CLI_HELP);
    cli_options_collect(NULL, NULL);
    assert_int_equal(calls, 1);
    assert_string_equal(collected.verb, "test");
    assert_string_equal(collected.usage, "Usage: mlbench test\n");
    assert_ptr_equal(collected.options, t);
}

/* --help: the options block made from the rows (aligned, wrapped, groups, lists), between the
 * usage and the tail. */
static void test_help(void **state)
{
    (void)state;
    bool flag = false;
    int n = 0;
    const char *fmt = NULL, *name = NULL;
    const struct cli_option t[] = {
        CLI_OPT_FLAG("flag", 'f', &flag, .help = "a flag"),
        CLI_OPT_INTEGER("number", 'n', &n, 0, 9, 0, NULL, .metavar = "N",
                        .help = "a description long enough to be wrapped at the width of the "
                                "screen, which is 88 columns"),
        CLI_OPT_STRING("format", 0, &fmt, 0, NULL, .metavar = "FMT", .group = "Output:",
                       .help = "the format:\n  a    the first, with a description long enough "
                               "to go on under itself\n  bb   the second"),
        CLI_OPT_STRING("a-very-long-option-name", 0, &name, 0, NULL, .metavar = "NAME",
                       .help = "on a line of its own"),
        CLI_OPT_STRING("undocumented", 0, &name, 0, NULL),
        CLI_OPT_END,
    };
    const struct cli_parser p = {.verb = "test", .options = t, .usage = "Usage: mlbench test\n",
                                 .tail = "Exit status: 0.\n"};
    char *text;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    cli_help_write(out, &p);
    assert_int_equal(fclose(out), 0);
    assert_string_equal(text,
        "Usage: mlbench test\n"
        "\n"
        "  -f, --flag          a flag\n"
        "  -n, --number N      a description long enough to be wrapped at the width of the\n"
        "                      screen, which is 88 columns\n"
        "Output:\n"
        "      --format FMT    the format:\n"
        "                        a    the first, with a description long enough to go on under\n"
        "                             itself\n"
        "                        bb   the second\n"
        "      --a-very-long-option-name NAME\n"
        "                      on a line of its own\n"
        "  -h, --help          this help\n"
        "\n"
        "Exit status: 0.\n");
    free(text);
}

static void test_arguments(void **state)
{
    (void)state;
    struct all a = {0};
    struct cli_option t[N_ROWS];
    table_of(&a, t);
    struct cli_args args;
    /* options anywhere by default; "--" ends them */
    assert_int_equal(PARSE(t, 0, &args, "ref", "--flag", "--", "-i"), CLI_OK);
    assert_true(a.flag);
    assert_int_equal(args.n, 2);
    assert_string_equal(args.v[0], "ref");
    assert_string_equal(args.v[1], "-i");
    /* CLI_STOP_AT_ARG: the first argument and all after it are a command's own */
    a.flag = false;
    assert_int_equal(PARSE(t, CLI_STOP_AT_ARG, &args, "-i", "2", "sleep", "-i", "1", "--flag"),
                     CLI_OK);
    assert_int_equal(a.i, 2);
    assert_false(a.flag);
    assert_int_equal(args.n, 4);
    assert_string_equal(args.v[0], "sleep");
    assert_string_equal(args.v[3], "--flag");
}

/* ---- what `mlbench run` (src/cli/run_options.c) needs ---- */

struct run_like {
    int runs, warmup;
    double timeout_s;
    const char *prepare, *serve;
    int64_t interval_ns;
    struct strvec params;
};

static int check_param(const char *value, char *e, size_t len)
{
    (void)e;
    (void)len;
    return strchr(value, '=') && value[0] != '=' ? 0 : -1; /* the parser names the value */
}

static int set_serve(void *dest, const char *value, char *e, size_t len)
{
    if (strncmp(value, ":", 1) != 0) {
        snprintf(e, len, "--serve '%s': give :PORT", value); /* the callee's own message */
        return -1;
    }
    *(const char **)dest = value;
    return 0;
}

static void test_run_shaped(void **state)
{
    (void)state;
    struct run_like r = {.interval_ns = 100000000};
    const struct cli_option t[] = {
        CLI_OPT_INTEGER("runs", 'r', &r.runs, 1, 1000000, 0, NULL),
        CLI_OPT_INTEGER("warmup", 'w', &r.warmup, 0, 1000000, 0, NULL),
        CLI_OPT_SECONDS("timeout", 0, &r.timeout_s, 0, INFINITY, CLI_OPEN_MIN,
                        "is not a positive duration (e.g. 30, 2.5s, 150ms, 10m)"),
        CLI_OPT_STRING("prepare", 0, &r.prepare, CLI_NOT_BLANK, "is empty: give a command"),
        CLI_OPT_NANOSECONDS("interval", 0, &r.interval_ns, 10000000, 10000000000LL,
                            "is not a duration from 10ms to 10s (e.g. 100ms, 0.5, 2s)"),
        CLI_OPT_STRINGS("param", 0, &r.params, 0, check_param, "is not NAME=VALUE"),
        CLI_OPT_CALL("serve", 0, &r.serve, set_serve, NULL),
        CLI_OPT_END,
    };
    struct cli_args args;
    assert_int_equal(PARSE(t, CLI_STOP_AT_ARG, &args, "-r", "3", "--timeout", "1.5m",
                           "--prepare", "sync", "--interval", "0.5", "--param", "a=1",
                           "--serve", ":9464", "python", "train.py", "-r", "1"),
                     CLI_OK);
    assert_int_equal(r.runs, 3);
    assert_true(r.timeout_s == 90);
    assert_string_equal(r.prepare, "sync");
    assert_true(r.interval_ns == 500000000);
    assert_int_equal(r.params.n, 1);
    assert_string_equal(r.serve, ":9464");
    assert_int_equal(args.n, 4);
    assert_string_equal(args.v[2], "-r");
    strvec_free(&r.params);

    const struct {
        const char *needle;
        char *opt, *value;
    } cases[] = {
        {"--runs '0' is not a whole number from 1 to 1000000", "-r", "0"},
        {"--timeout '0' is not a positive duration", "--timeout", "0"},
        {"--timeout 'nan' is not a positive duration", "--timeout", "nan"},
        {"--prepare is empty: give a command", "--prepare", "  "},
        {"--interval '5ms' is not a duration from 10ms to 10s", "--interval", "5ms"},
        {"--param '=x' is not NAME=VALUE", "--param", "=x"},
        {"--serve 'x': give :PORT", "--serve", "x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(PARSE(t, CLI_STOP_AT_ARG, NULL, cases[i].opt, cases[i].value, "x"),
                         CLI_ERROR);
        if (!strstr(err, cases[i].needle))
            fail_msg("error '%s' does not contain '%s'", err, cases[i].needle);
    }
    strvec_free(&r.params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_color),
        cmocka_unit_test(test_collect),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_run_shaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
