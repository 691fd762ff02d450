/* Unit test of every command's help (src/cli/commands.c): each command is run with --help while
 * a collector is set (cli_options_collect, as `mlbench completion` does), and each row of its
 * parser must carry its help, and a metavar when it takes a value, since --help's options
 * block, the man pages and the completions are all made from the rows; its --help must then
 * name every option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"

/* The help of one command's parser, written while it is collected (the rows are gone after). */
struct collected {
    const char *verb;
    int parsers;
    char *help; /* what --help prints */
};

/* Fails on a row without help, or without a metavar where it takes a value (or with one where
 * it takes none). */
static void check_row(const char *verb, const struct cli_option *o)
{
    if (!o->help || !*o->help)
        fail_msg("mlbench %s --%s: the row has no help", verb, o->name);
    bool takes_value = o->kind != CLI_FLAG;
    if (takes_value && (!o->metavar || !*o->metavar))
        fail_msg("mlbench %s --%s takes a value: the row has no metavar", verb, o->name);
    if (!takes_value && o->metavar)
        fail_msg("mlbench %s --%s is a flag: the row has a metavar '%s'", verb, o->name,
                 o->metavar);
}

static void collect(const struct cli_parser *p, void *arg)
{
    struct collected *c = arg;
    c->parsers++;
    assert_string_equal(p->verb, c->verb);
    assert_non_null(p->usage);
    for (const struct cli_option *o = p->options; o->name; o++)
        check_row(p->verb, o);
    size_t len;
    FILE *out = open_memstream(&c->help, &len);
    assert_non_null(out);
    cli_help_write(out, p);
    assert_int_equal(fclose(out), 0);
    for (const struct cli_option *o = p->options; o->name; o++) {
        char lead[128];
        snprintf(lead, sizeof lead, "--%s%s%s", o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
        if (!strstr(c->help, lead))
            fail_msg("mlbench %s --help does not show '%s'", p->verb, lead);
    }
}

/* Runs VERB --help through run with the collector set; returns its help, to be freed. */
static char *help_of(const char *verb, int (*run)(int, char **))
{
    struct collected c = {.verb = verb};
    char *argv[] = {(char *)verb, "--help", NULL};
    cli_options_collect(collect, &c);
    int status = run(2, argv);
    cli_options_collect(NULL, NULL);
    assert_int_equal(status, 0);
    if (c.parsers != 1)
        fail_msg("mlbench %s --help handed over %d parsers, not 1", verb, c.parsers);
    return c.help;
}

static void test_every_command(void **state)
{
    (void)state;
    for (const struct cli_command *cmd = cli_commands; cmd->verb; cmd++) {
        char *help = help_of(cmd->verb, cmd->run);
        char usage[64];
        snprintf(usage, sizeof usage, "Usage: mlbench %s", cmd->verb);
        if (strncmp(help, usage, strlen(usage)) != 0)
            fail_msg("mlbench %s --help starts '%.40s'", cmd->verb, help);
        assert_non_null(strstr(help, "  -h, --help "));
        free(help);
    }
    free(help_of("workflow-exec", cmd_workflow_exec)); /* hidden, but it has a row */
}

/* sweep's parser has run's rows and its own: both are described. */
static void test_sweep_has_run_rows(void **state)
{
    (void)state;
    for (const struct cli_command *cmd = cli_commands; cmd->verb; cmd++)
        if (!strcmp(cmd->verb, "sweep")) {
            char *help = help_of("sweep", cmd->run);
            assert_non_null(strstr(help, "--runs N"));
            assert_non_null(strstr(help, "--parameter-list NAME V1,V2,..."));
            free(help);
            return;
        }
    fail_msg("no sweep in the table of commands");
}

/* The rows every parser has (--color, -h) are described like the others. */
static void test_shared_rows(void **state)
{
    (void)state;
    check_row("(every command)", &cli_color_option);
    check_row("(every command)", &cli_help_option);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_command),
        cmocka_unit_test(test_sweep_has_run_rows),
        cmocka_unit_test(test_shared_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
