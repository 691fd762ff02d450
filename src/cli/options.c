/* options: the table-driven option parser of the command line (see options.h). */
#include "cli/options.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"
#include "live/http_server.h"

#define VAL_FIRST 256 /* getopt_long's value for row i is VAL_FIRST + i: above every char */

static void (*collector)(const struct cli_parser *p, void *arg);
static void *collector_arg;

static int store_color(void *dest, const char *value, char *err, size_t errlen)
{
    (void)dest;
    enum term_color when;
    if (term_color_parse(value, &when) < 0) {
        snprintf(err, errlen, "--color '%s' is not auto, always or never", value);
        return -1;
    }
    term_color_set(when);
    return 0;
}

const struct cli_option cli_color_option = {"color", 0, CLI_CALL, NULL, .call = store_color,
                                            .expected = "is not auto, always or never"};

void cli_options_collect(void (*fn)(const struct cli_parser *p, void *arg), void *arg)
{
    collector = fn;
    collector_arg = arg;
}

int cli_help(const struct cli_parser *p)
{
    if (collector)
        collector(p, collector_arg);
    else if (p->usage)
        fputs(p->usage, stdout);
    return 0;
}

/* "--name 'VALUE' <expected>", or the default text when the row has none. */
static void bad_value(const struct cli_option *o, const char *value, const char *dflt,
                      char *err, size_t errlen)
{
    snprintf(err, errlen, "--%s '%s' %s", o->name, value, o->expected ? o->expected : dflt);
}

static int parse_string(const struct cli_option *o, const char *value, char *err,
                        size_t errlen)
{
    if (((o->flags & (CLI_NONEMPTY | CLI_NOT_BLANK)) && !*value) ||
        ((o->flags & CLI_NOT_BLANK) && strspn(value, " \t") == strlen(value))) {
        snprintf(err, errlen, "--%s %s", o->name,
                 o->expected ? o->expected : "is empty: give a value");
        return -1;
    }
    if (o->check && o->check(value, err, errlen) < 0) {
        if (!*err)
            bad_value(o, value, "is not valid", err, errlen);
        return -1;
    }
    return 0;
}

static void strings_add(struct cli_strings *s, char *value, int argc)
{
    if (!s->v) /* never more values than arguments */
        s->v = xcalloc((size_t)argc + 1, sizeof *s->v);
    s->v[s->n++] = value;
}

static int parse_integer(const struct cli_option *o, const char *value, char *err,
                         size_t errlen)
{
    int c_syntax = (o->flags & CLI_C_INTEGER) != 0;
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, c_syntax ? 0 : 10);
    if (errno || end == value || *end || v < o->imin || v > o->imax ||
        (c_syntax && value[0] == '-')) {
        char dflt[96];
        snprintf(dflt, sizeof dflt, "is not a whole number from %lld to %lld", o->imin,
                 o->imax);
        bad_value(o, value, dflt, err, errlen);
        return -1;
    }
    switch (o->kind) {
    case CLI_INT: *(int *)o->dest = (int)v; break;
    case CLI_UINT: *(unsigned *)o->dest = (unsigned)v; break;
    case CLI_LONG: *(long *)o->dest = (long)v; break;
    case CLI_ULONG: *(unsigned long *)o->dest = (unsigned long)v; break;
    case CLI_LLONG: *(long long *)o->dest = v; break;
    case CLI_ULLONG: *(unsigned long long *)o->dest = (unsigned long long)v; break;
    default: assert(!"not an integer kind");
    }
    return 0;
}

/* Nonzero when v is inside the row's [dmin, dmax], an end excluded by CLI_OPEN_*. */
static int inside(const struct cli_option *o, double v)
{
    int above = (o->flags & CLI_OPEN_MIN) ? v > o->dmin : v >= o->dmin;
    int below = (o->flags & CLI_OPEN_MAX) ? v < o->dmax : v <= o->dmax;
    return above && below;
}

static int parse_double(const struct cli_option *o, const char *value, char *err,
                        size_t errlen)
{
    char *end;
    double v = strtod(value, &end);
    if ((o->flags & CLI_PERCENT) && end != value && *end == '%')
        end++;
    if (end == value || *end || !isfinite(v) || !inside(o, v)) {
        char dflt[96];
        snprintf(dflt, sizeof dflt, "is not a number from %g to %g", o->dmin, o->dmax);
        bad_value(o, value, dflt, err, errlen);
        return -1;
    }
    *(double *)o->dest = v;
    return 0;
}

static int parse_duration(const struct cli_option *o, const char *value, char *err,
                          size_t errlen)
{
    double sec;
    int ok = units_parse_seconds(value, &sec) == 0;
    if (o->kind == CLI_SECONDS) {
        if (ok && inside(o, sec)) {
            *(double *)o->dest = sec;
            return 0;
        }
    } else {
        /* the range applies to what is stored: the rounded nanoseconds */
        double ns = ok ? sec * 1e9 + 0.5 : NAN;
        if (ok && ns < 9.2e18 && (int64_t)ns >= o->imin && (int64_t)ns <= o->imax) {
            *(int64_t *)o->dest = (int64_t)ns;
            return 0;
        }
    }
    bad_value(o, value, "is not a duration (e.g. 30, 2.5s, 150ms, 10m)", err, errlen);
    return -1;
}

/* Checks the value of row o and stores it. Returns 0, or -1 with the message in err. */
static int store(const struct cli_option *o, char *value, int argc, char *err, size_t errlen)
{
    err[0] = '\0';
    switch (o->kind) {
    case CLI_FLAG:
        *(bool *)o->dest = true;
        return 0;
    case CLI_STRING:
        if (parse_string(o, value, err, errlen) < 0)
            return -1;
        *(const char **)o->dest = value;
        return 0;
    case CLI_STRINGS:
        if (parse_string(o, value, err, errlen) < 0)
            return -1;
        strings_add(o->dest, value, argc);
        return 0;
    case CLI_INT:
    case CLI_UINT:
    case CLI_LONG:
    case CLI_ULONG:
    case CLI_LLONG:
    case CLI_ULLONG:
        return parse_integer(o, value, err, errlen);
    case CLI_DOUBLE:
        return parse_double(o, value, err, errlen);
    case CLI_SECONDS:
    case CLI_NANOSECONDS:
        return parse_duration(o, value, err, errlen);
    case CLI_CALL:
        if (o->call(o->dest, value, err, errlen) < 0) {
            if (!*err)
                bad_value(o, value, "is not valid", err, errlen);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* The row of short option c, or -1. */
static int row_of_short(const struct cli_option *t, size_t n, int c)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].short_name && t[i].short_name == c)
            return (int)i;
    return -1;
}

int cli_options_parse(const struct cli_parser *p, int argc, char **argv, struct cli_args *args,
                      char *err, size_t errlen)
{
    const struct cli_option *t = p->options;
    size_t n = 0;
    while (t[n].name)
        n++;
    /* getopt's tables: a long option per row, --color and --help; short options "+:ab:h" */
    struct option *longs = xcalloc(n + 3, sizeof *longs);
    char *shorts = xmalloc(3 * n + 4), *s = shorts;
    if (p->flags & CLI_STOP_AT_ARG)
        *s++ = '+';
    *s++ = ':'; /* a missing value returns ':' */
    for (size_t i = 0; i < n; i++) {
        int has_arg = t[i].kind == CLI_FLAG ? no_argument : required_argument;
        assert(t[i].short_name != 'h' && "-h is --help");
        assert(t[i].dest || t[i].kind == CLI_CALL);
        longs[i] = (struct option){t[i].name, has_arg, NULL, VAL_FIRST + (int)i};
        if (t[i].short_name) {
            *s++ = t[i].short_name;
            if (has_arg == required_argument)
                *s++ = ':';
        }
    }
    longs[n] = (struct option){"color", required_argument, NULL, VAL_FIRST + (int)n};
    longs[n + 1] = (struct option){"help", no_argument, NULL, VAL_FIRST + (int)n + 1};
    *s++ = 'h';
    *s = '\0';

    optind = 0; /* full reset: getopt may have been used before */
    opterr = 0;
    int c, rc = CLI_OK;
    while (rc == CLI_OK && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        int row = c >= VAL_FIRST ? c - VAL_FIRST : row_of_short(t, n, c);
        if (c == 'h' || row == (int)n + 1) {
            cli_help(p);
            rc = CLI_HELP;
        } else if (row == (int)n) {
            if (store(&cli_color_option, optarg, argc, err, errlen) < 0)
                rc = CLI_ERROR;
        } else if (c == ':') {
            snprintf(err, errlen, "option '%s' needs a value (see mlbench %s --help)",
                     argv[optind - 1], p->verb);
            rc = CLI_ERROR;
        } else if (c == '?' || row < 0) {
            /* optopt: the unknown short option (argv[optind - 1] may be a cluster "-qx");
             * 0 or a row's value for a long one */
            if (optopt > 0 && optopt < VAL_FIRST)
                snprintf(err, errlen, "unknown option '-%c' (see mlbench %s --help)", optopt,
                         p->verb);
            else
                snprintf(err, errlen, "unknown option '%s' (see mlbench %s --help)",
                         argv[optind - 1], p->verb);
            rc = CLI_ERROR;
        } else if (store(&t[row], optarg, argc, err, errlen) < 0) {
            rc = CLI_ERROR;
        }
    }
    free(longs);
    free(shorts);
    if (rc != CLI_OK)
        return rc;
    if ((p->flags & CLI_NO_ARGS) && optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (see mlbench %s --help)", argv[optind],
                 p->verb);
        return CLI_ERROR;
    }
    args->v = argv + optind;
    args->n = argc - optind;
    return CLI_OK;
}

int cli_store_listen(void *dest, const char *value, char *err, size_t errlen)
{
    struct sockaddr_storage addr;
    socklen_t len;
    if (http_parse_listen(value, &addr, &len, err, errlen) < 0)
        return -1;
    *(const char **)dest = value;
    return 0;
}
