/* options: the command line's option parser. A command describes its options in a table (name,
 * kind, where the value goes, the range it must be in, what to say when it is not) and
 * cli_options_parse() reads argv against it: every bad value is refused with a message that
 * names the option and the value, and the caller exits 2. --help and -h are always there.
 *
 * Example (cmd_history.c):
 *
 *     const struct cli_option table[] = {
 *         CLI_OPT_STRING("label", 'l', &o->label, 0, NULL,
 *                        .metavar = "NAME", .help = "only results with this label"),
 *         CLI_OPT_INTEGER("last", 'n', &o->last, 1, 100000000, 0,
 *                         "is not a number of results (1 or more)",
 *                         .metavar = "N", .help = "only the newest N results"),
 *         CLI_OPT_FLAG("json", 0, &o->json, .help = "print a JSON document"),
 *         CLI_OPT_STORE(&o->store),
 *         CLI_OPT_END,
 *     };
 *     const struct cli_parser p = {.verb = "history", .options = table, .flags = CLI_NO_ARGS,
 *                                  .usage = "Usage: mlbench history [options]\n\n...",
 *                                  .tail = "docs/store.md describes the store.\n"};
 *     struct cli_args args;
 *     int status;
 *     if (!cli_parse_args(&p, argc, argv, &args, &status))
 *         return status;
 *
 * "--last 0" gives "--last '0' is not a number of results (1 or more)"; "--bogus" gives
 * "unknown option '--bogus' (see mlbench history --help)"; --help prints the usage, the
 * options block made from the rows ("  -n, --last N   only the newest N results") and the
 * tail. Not thread-safe (--color sets the terminal's colour for the process). */
#ifndef MLBENCH_CLI_OPTIONS_H
#define MLBENCH_CLI_OPTIONS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strvec.h"

enum cli_kind {
    CLI_FLAG,        /* bool *: set to true; takes no value */
    CLI_STRING,      /* const char **: the value (points into argv); the last one given wins */
    CLI_STRINGS,     /* struct strvec *: a copy of every value, in order (repeatable); the
                      * caller frees it with strvec_free */
    CLI_INT,         /* integers: int *, unsigned *, long *, unsigned long *, long long *, */
    CLI_UINT,        /* unsigned long long * (CLI_OPT_INTEGER picks the kind from the type), */
    CLI_LONG,        /* in [imin, imax], decimal (or C syntax with CLI_C_INTEGER) */
    CLI_ULONG,
    CLI_LLONG,
    CLI_ULLONG,
    CLI_DOUBLE,      /* double *: a finite number in [dmin, dmax] (see CLI_OPEN_*, CLI_PERCENT) */
    CLI_SECONDS,     /* double *: a duration (util/units.h: 2.5, 150ms, 10m, 1h) in seconds,
                      * in [dmin, dmax] */
    CLI_NANOSECONDS, /* int64_t *: a duration rounded to nanoseconds, in [imin, imax] ns */
    CLI_CALL,        /* anything: call(dest, value) stores it */
    CLI_WORDS,       /* several words (-P NAME MIN MAX): call_words(dest, words, nwords) */
};

#define CLI_MAX_WORDS 4 /* the most words a CLI_WORDS row takes */

/* Row flags. */
#define CLI_NONEMPTY (1u << 0)  /* strings: "" is refused */
#define CLI_NOT_BLANK (1u << 1) /* strings: "" and only blanks (spaces, tabs) are refused */
#define CLI_OPEN_MIN (1u << 2)  /* numbers, durations: the minimum itself is refused */
#define CLI_OPEN_MAX (1u << 3)  /* numbers, durations: the maximum itself is refused */
#define CLI_PERCENT (1u << 4)   /* numbers: a '%' may follow ("5" or "5%") */
#define CLI_C_INTEGER (1u << 5) /* integers: also 0x2a and 052, as C writes them; no '-' */

/* One option. Rows are best written with the CLI_OPT_* macros below, which check the type of
 * dest at compile time. */
struct cli_option {
    const char *name;  /* long name without "--"; messages call the option "--name" */
    char short_name;   /* 'o' for -o, or 0 */
    enum cli_kind kind;
    void *dest;
    long long imin, imax;  /* integers and CLI_NANOSECONDS */
    double dmin, dmax;     /* CLI_DOUBLE and CLI_SECONDS */
    unsigned flags;        /* CLI_NONEMPTY ... */
    /* What a bad value gets told: the message is "--name 'VALUE' <expected>", or for an
     * empty string "--name <expected>" ("is empty: give a directory"). NULL: a message from
     * the kind and the range ("is not a whole number from 1 to 100"). */
    const char *expected;
    /* CLI_STRING, CLI_STRINGS (optional): checks a value before it is kept. CLI_CALL: stores
     * it into dest. Returns 0, or -1 with a message in err; when it leaves err empty the
     * parser writes "--name 'VALUE' <expected>". */
    int (*check)(const char *value, char *err, size_t errlen);
    int (*call)(void *dest, const char *value, char *err, size_t errlen);
    /* CLI_WORDS: the number of words it takes, and what stores them (words[0..nwords)). A
     * missing word gets "<the option as written> <expected>" (expected then says what the
     * words are: "needs NAME and VALUES, e.g. -L batch 32,64"). */
    int nwords;
    int (*call_words)(void *dest, char **words, int nwords, char *err, size_t errlen);
    /* --help: what the value is called ("N", "FILE", "NAME MIN MAX"; NULL for a flag) and what
     * the option does. The help is wrapped to the screen; a '\n' in it starts a new line (a
     * list of values). The options block of --help, the man page and the completions' texts
     * all come from these two; the metavar also tells the completions what the value is
     * (FILE: file names, DIR: directories, CMD: commands). Every row of a command has help
     * (tests/unit/test_cli_help.c). */
    const char *metavar, *help;
    /* --help: a heading written above this row, which starts a group of options
     * ("Requests:"); NULL for none. */
    const char *group;
};

/* Makes a compile error of a dest that is not a `type *`. */
#define CLI_DEST_(type, dest) _Generic((dest), type *: (dest))

/* The macros' last arguments (...) are the row's help, as designated initializers:
 * .metavar = "N", .help = "measured runs", and .group when the row starts a group. */
#define CLI_OPT_FLAG(name, sh, dest, ...)                                                     \
    {(name), (sh), CLI_FLAG, CLI_DEST_(bool, dest), .expected = NULL, __VA_ARGS__}
#define CLI_OPT_STRING(name, sh, dest, fl, expected_, ...)                                   \
    {(name), (sh), CLI_STRING, CLI_DEST_(const char *, dest), .flags = (fl),                  \
     .expected = (expected_), __VA_ARGS__}
/* A string option whose values check() accepts (check may be NULL). */
#define CLI_OPT_STRING_CHECKED(name, sh, dest, fl, check_, expected_, ...)                   \
    {(name), (sh), CLI_STRING, CLI_DEST_(const char *, dest), .flags = (fl),                  \
     .expected = (expected_), .check = (check_), __VA_ARGS__}
#define CLI_OPT_STRINGS(name, sh, dest, fl, check_, expected_, ...)                          \
    {(name), (sh), CLI_STRINGS, CLI_DEST_(struct strvec, dest), .flags = (fl),                \
     .expected = (expected_), .check = (check_), __VA_ARGS__}
#define CLI_INTEGER_KIND_(dest)                                                               \
    _Generic((dest), int *: CLI_INT, unsigned *: CLI_UINT, long *: CLI_LONG,                  \
             unsigned long *: CLI_ULONG, long long *: CLI_LLONG,                               \
             unsigned long long *: CLI_ULLONG)
#define CLI_OPT_INTEGER(name, sh, dest, lo, hi, fl, expected_, ...)                          \
    {(name), (sh), CLI_INTEGER_KIND_(dest), (dest), (lo), (hi), .flags = (fl),                \
     .expected = (expected_), __VA_ARGS__}
#define CLI_OPT_NUMBER(name, sh, dest, lo, hi, fl, expected_, ...)                           \
    {(name), (sh), CLI_DOUBLE, CLI_DEST_(double, dest), .dmin = (lo), .dmax = (hi),           \
     .flags = (fl), .expected = (expected_), __VA_ARGS__}
#define CLI_OPT_SECONDS(name, sh, dest, lo, hi, fl, expected_, ...)                          \
    {(name), (sh), CLI_SECONDS, CLI_DEST_(double, dest), .dmin = (lo), .dmax = (hi),          \
     .flags = (fl), .expected = (expected_), __VA_ARGS__}
#define CLI_OPT_NANOSECONDS(name, sh, dest, lo_ns, hi_ns, expected_, ...)                    \
    {(name), (sh), CLI_NANOSECONDS, CLI_DEST_(int64_t, dest), (lo_ns), (hi_ns),               \
     .expected = (expected_), __VA_ARGS__}
#define CLI_OPT_CALL(name, sh, dest, call_, expected_, ...)                                  \
    {(name), (sh), CLI_CALL, (dest), .expected = (expected_), .call = (call_), __VA_ARGS__}
#define CLI_OPT_WORDS(name, sh, dest, n, call_, expected_, ...)                              \
    {(name), (sh), CLI_WORDS, (dest), .expected = (expected_), .nwords = (n),                  \
     .call_words = (call_), __VA_ARGS__}
#define CLI_OPT_END {NULL, 0, CLI_FLAG, NULL, .expected = NULL}

/* Rows several commands share, with one wording. */
#define CLI_OPT_STORE(dest)                                                                   \
    CLI_OPT_STRING("store", 0, dest, CLI_NONEMPTY, "is empty: give a directory",              \
                   .metavar = "DIR|URI",                                                      \
                   .help = "result store: a directory, or a shared one: postgresql://host/db " \
                           "(docs/store.md); default .mlbench, or $MLBENCH_STORE")
#define CLI_OPT_ALPHA(dest)                                                                   \
    CLI_OPT_NUMBER("alpha", 0, dest, 0, 1, CLI_OPEN_MIN | CLI_OPEN_MAX,                       \
                   "is not a number between 0 and 1 (exclusive), e.g. 0.05", .metavar = "A",  \
                   .help = "significance level of comparisons, 0 < A < 1 (default 0.05)")
#define CLI_OPT_MIN_EFFECT(dest)                                                              \
    CLI_OPT_NUMBER("min-effect", 0, dest, 0, INFINITY, CLI_PERCENT,                           \
                   "is not a percentage >= 0 (e.g. 5 or 5%)", .metavar = "PCT",               \
                   .help = "smallest change comparisons count, in percent (default 2)")

/* An address to serve on (HOST:PORT, [IPV6]:PORT, :PORT), checked now, opened later. */
#define CLI_OPT_LISTEN(name, dest, ...)                                                       \
    CLI_OPT_CALL(name, 0, CLI_DEST_(const char *, dest), cli_store_listen, NULL, __VA_ARGS__)
int cli_store_listen(void *dest, const char *value, char *err, size_t errlen);

/* The rows of --color and -h, --help, which cli_options_parse adds to every table. */
extern const struct cli_option cli_color_option;
extern const struct cli_option cli_help_option;

/* Parser flags. */
#define CLI_STOP_AT_ARG (1u << 0) /* options end at the first argument that is not one (what
                                   * follows is a command's own); otherwise they may come
                                   * anywhere ("show REF --json") */
#define CLI_NO_ARGS (1u << 1)     /* any argument is refused: "unexpected argument 'X'" */

struct cli_parser {
    const char *verb;                 /* "history": named in "(see mlbench history --help)" */
    const struct cli_option *options; /* ended by CLI_OPT_END */
    unsigned flags;                   /* CLI_STOP_AT_ARG, CLI_NO_ARGS */
    /* The command's help, with the rows' (cli_help): the prose above the options (the
     * synopsis, what the command does) and below them (exit status, see also; NULL for none).
     * --help is the one source of the command's man page (help2man, packaging/); the rows are
     * that of the shell completions (cmd_completion.c). Initialise a parser with designated
     * initializers (.verb = ..., .usage = ...). */
    const char *usage;
    const char *tail;
};

/* The arguments that are not options, in order: v[0..n) point into argv. */
struct cli_args {
    char **v;
    int n;
};

#define CLI_OK 0
#define CLI_HELP 1   /* -h or --help: the usage was printed (cli_help); the caller exits 0 */
#define CLI_ERROR -1 /* err names the bad option or value; the caller exits 2 */

/* Parses argv[1..argc) (argv[0] is the verb) against p's table and stores each option given
 * into its dest (the others are left as they are: set the defaults before). "--" ends the
 * options. --color WHEN (auto, always, never) is known to every command and sets the
 * terminal's colour (util/term.h). Returns CLI_OK with the other arguments in *args,
 * CLI_HELP (after cli_help(p)), or CLI_ERROR with a message in err (no "verb: " prefix: the
 * caller adds its own), after which some dests may already be written. Reorders argv (the
 * options first) unless CLI_STOP_AT_ARG, as GNU getopt does. Not thread-safe (--color). */
int cli_options_parse(const struct cli_parser *p, int argc, char **argv, struct cli_args *args,
                      char *err, size_t errlen);

/* --help: prints p's help on stdout (cli_help_write); while a collector is set
 * (cli_options_collect), hands p to it instead and prints nothing. Returns 0 (the exit status
 * of --help). */
int cli_help(const struct cli_parser *p);

/* Writes p's help to out: its usage, a blank line, the options block of its rows
 * (cli_help_options), then after a blank line its tail; nothing when p has no usage. */
void cli_help_write(FILE *out, const struct cli_parser *p);

/* Writes the options block of --help made from the rows of table (ended by CLI_OPT_END) that
 * carry help, then -h, --help: "  -r, --runs N        what it does", descriptions wrapped at
 * the screen's width and aligned in one column; a row's group heading on a line above it. */
void cli_help_options(FILE *out, const struct cli_option *table);

/* The parse every command starts with: cli_options_parse, then on --help or a bad option what
 * the command does next. Returns true when the command goes on (*exit_status 0); false with
 * *exit_status 0 (--help was printed) or 2 (the error, "verb: message", was logged). */
bool cli_parse_args(const struct cli_parser *p, int argc, char **argv, struct cli_args *args,
                    int *exit_status);

/* Makes cli_help (and so cli_options_parse, on --help) give each parser to fn instead of
 * printing it: how `mlbench completion` reads every command's options by running it with
 * --help. fn NULL ends it. Not thread-safe. */
void cli_options_collect(void (*fn)(const struct cli_parser *p, void *arg), void *arg);

#endif
