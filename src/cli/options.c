/* options: the table-driven option parser of the command line (see options.h). */
#include "cli/options.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strvec.h"
#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"
#include "live/http_server.h"

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

const struct cli_option cli_color_option = {
    "color", 0, CLI_CALL, NULL, .call = store_color, .expected = "is not auto, always or never",
    .metavar = "WHEN",
    .help = "auto (colour on a terminal unless NO_COLOR is set), always or never"};
const struct cli_option cli_help_option = {"help", 'h', CLI_FLAG, NULL, .help = "this help"};

void cli_options_collect(void (*fn)(const struct cli_parser *p, void *arg), void *arg)
{
    collector = fn;
    collector_arg = arg;
}

#define HELP_COLS 88      /* the width --help is wrapped to */
#define HELP_LEAD_MAX 30  /* options longer than this put their description on the next line */

/* "  -r, --runs N" of row o into buf. */
static void option_lead(const struct cli_option *o, char *buf, size_t len)
{
    char sh[8] = "    ";
    if (o->short_name)
        snprintf(sh, sizeof sh, "-%c, ", o->short_name);
    snprintf(buf, len, "  %s--%s%s%s", sh, o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
}

/* Writes text from column col, wrapped at HELP_COLS, continuation lines from column indent. The
 * blanks between words are kept where no line is broken, so a list lines up: a line that starts
 * with blanks ("  md    tables for ...") continues under the word after its first wide gap. */
static void help_words(FILE *out, const char *text, int col, int indent)
{
    const char *p = text;
    bool first = true, item = false;
    int hang = indent; /* where a broken line goes on */
    while (*p) {
        if (*p == '\n') {
            fprintf(out, "\n%*s", indent, "");
            col = hang = indent;
            first = true;
            item = p[1] == ' ';
            p++;
            continue;
        }
        size_t gap = strspn(p, " ");
        const char *word = p + gap;
        size_t n = strcspn(word, " \n");
        p = word + n;
        if (n == 0) /* blanks at the end of a line */
            continue;
        if (!first && col + (int)(gap + n) > HELP_COLS) {
            fprintf(out, "\n%*s", hang, "");
            col = hang;
            gap = 0;
        } else if (!first && item && gap >= 2 && hang == indent) {
            hang = col + (int)gap;
        }
        fprintf(out, "%*s%.*s", (int)gap, "", (int)n, word);
        col += (int)(gap + n);
        first = false;
    }
    putc('\n', out);
}

void cli_help_options(FILE *out, const struct cli_option *table)
{
    const struct cli_option *help_row = &cli_help_option;
    char lead[128];
    int column = 0;
    for (size_t i = 0;; i++) {
        const struct cli_option *o = table[i].name ? &table[i] : help_row;
        option_lead(o, lead, sizeof lead);
        int w = (int)strlen(lead) + 2;
        if (w <= HELP_LEAD_MAX && w > column)
            column = w;
        if (o == help_row)
            break;
    }
    for (size_t i = 0;; i++) {
        const struct cli_option *o = table[i].name ? &table[i] : help_row;
        if (o->group)
            fprintf(out, "%s\n", o->group);
        if (o->help) {
            option_lead(o, lead, sizeof lead);
            int w = (int)strlen(lead);
            fputs(lead, out);
            if (w + 2 > column)
                fprintf(out, "\n%*s", column, "");
            else
                fprintf(out, "%*s", column - w, "");
            help_words(out, o->help, column, column);
        }
        if (o == help_row)
            break;
    }
}

void cli_help_write(FILE *out, const struct cli_parser *p)
{
    if (!p->usage)
        return;
    fputs(p->usage, out);
    putc('\n', out);
    cli_help_options(out, p->options);
    if (p->tail)
        fprintf(out, "\n%s", p->tail);
}

int cli_help(const struct cli_parser *p)
{
    if (collector)
        collector(p, collector_arg);
    else
        cli_help_write(stdout, p);
    return 0;
}

bool cli_parse_args(const struct cli_parser *p, int argc, char **argv, struct cli_args *args,
                    int *exit_status)
{
    char err[1024];
    int rc = cli_options_parse(p, argc, argv, args, err, sizeof err);
    if (rc == CLI_ERROR)
        log_error("%s: %s", p->verb, err);
    *exit_status = rc == CLI_ERROR ? 2 : 0;
    return rc == CLI_OK;
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
static int store(const struct cli_option *o, char *value, char *err, size_t errlen)
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
        strvec_push(o->dest, value);
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
    case CLI_WORDS:
        assert(!"CLI_WORDS rows are given their words by give()");
        return -1;
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

/* ---- the parser --------------------------------------------------------------------------
 * GNU getopt_long's conventions, read from the table itself (so that one table also tells how
 * many words each option takes, which getopt cannot: -P NAME MIN MAX): --name VALUE,
 * --name=VALUE, a unique prefix of a long name (--lab for --label; an exact name wins), -r 5,
 * -r5, clusters of short flags (-qv, -qr5), "--" ends the options, "-" alone is an argument.
 * Arguments may come between options unless CLI_STOP_AT_ARG; argv is then reordered, options
 * first, so that the arguments are argv's tail, in their order. */

struct scan {
    const struct cli_parser *p;
    const struct cli_option *t;
    size_t n;              /* rows of t */
    int argc;
    char **argv;
    char *err;
    size_t errlen;
};

/* The help and color rows, which every table has. */
#define ROW_COLOR ((size_t)-2)
#define ROW_HELP ((size_t)-3)

static const struct cli_option *row_at(const struct scan *sc, size_t row)
{
    return row == ROW_COLOR ? &cli_color_option : &sc->t[row];
}

/* The words a row takes after its name: 0 for a flag. */
static int words_of(const struct cli_option *o)
{
    return o->kind == CLI_FLAG ? 0 : o->kind == CLI_WORDS ? o->nwords : 1;
}

/* The row of long option name[0..len): the exact name, else the one whose name it is a prefix
 * of. Returns the row, ROW_HELP/ROW_COLOR, or (size_t)-1 with a message in err (unknown or
 * ambiguous; word is the argument as written). */
static size_t long_row(struct scan *sc, const char *name, size_t len, const char *word)
{
    const char *extra[2] = {"color", "help"};
    size_t found = (size_t)-1, matches = 0;
    char which[160] = "";
    for (size_t i = 0; i < sc->n + 2; i++) {
        const char *row_name = i < sc->n ? sc->t[i].name : extra[i - sc->n];
        size_t row = i < sc->n ? i : i == sc->n ? ROW_COLOR : ROW_HELP;
        if (strlen(row_name) == len && !strncmp(row_name, name, len))
            return row;
        if (len && !strncmp(row_name, name, len)) {
            found = row;
            size_t used = strlen(which);
            snprintf(which + used, sizeof which - used, "%s--%s", matches++ ? " or " : "",
                     row_name);
        }
    }
    if (matches == 1)
        return found;
    if (matches > 1)
        snprintf(sc->err, sc->errlen, "option '%s' is ambiguous: %s (see mlbench %s --help)",
                 word, which, sc->p->verb);
    else
        snprintf(sc->err, sc->errlen, "unknown option '%s' (see mlbench %s --help)", word,
                 sc->p->verb);
    return (size_t)-1;
}

static size_t short_row(const struct scan *sc, char c)
{
    if (c == 'h')
        return ROW_HELP;
    for (size_t i = 0; i < sc->n; i++)
        if (sc->t[i].short_name && sc->t[i].short_name == c)
            return i;
    return (size_t)-1;
}

/* Gives row its words: inline (the rest of "-r5" or "--name=5"; NULL when none), then as many
 * of argv[*i + 1 ..] as it still needs, advancing *i. written: the option as the user wrote it,
 * for messages. Returns CLI_OK, CLI_HELP or CLI_ERROR. */
static int give(struct scan *sc, size_t row, char *inline_value, int *i, const char *written)
{
    if (row == ROW_HELP) {
        cli_help(sc->p);
        return CLI_HELP;
    }
    const struct cli_option *o = row_at(sc, row);
    int need = words_of(o);
    char *words[CLI_MAX_WORDS];
    int have = 0;
    if (inline_value) {
        if (!need) {
            snprintf(sc->err, sc->errlen, "unknown option '%s': --%s takes no value (see "
                     "mlbench %s --help)", written, o->name, sc->p->verb);
            return CLI_ERROR;
        }
        words[have++] = inline_value;
    }
    while (have < need) {
        if (*i + 1 >= sc->argc) {
            if (need > 1 && o->expected)
                snprintf(sc->err, sc->errlen, "%s %s", written, o->expected);
            else
                snprintf(sc->err, sc->errlen, "option '%s' needs %s (see mlbench %s --help)",
                         written, need > 1 ? "more values" : "a value", sc->p->verb);
            return CLI_ERROR;
        }
        words[have++] = sc->argv[++*i];
    }
    sc->err[0] = '\0';
    if (o->kind == CLI_WORDS) {
        if (o->call_words(o->dest, words, need, sc->err, sc->errlen) < 0) {
            if (!*sc->err)
                snprintf(sc->err, sc->errlen, "--%s %s", o->name,
                         o->expected ? o->expected : "is not valid");
            return CLI_ERROR;
        }
        return CLI_OK;
    }
    return store(o, need ? words[0] : NULL, sc->err, sc->errlen) < 0 ? CLI_ERROR : CLI_OK;
}

/* Reads one word that starts with '-' (not "-" nor "--") at argv[*i]. */
static int option_word(struct scan *sc, int *i)
{
    char *word = sc->argv[*i];
    if (word[1] == '-') {
        char *name = word + 2, *eq = strchr(name, '=');
        size_t row = long_row(sc, name, eq ? (size_t)(eq - name) : strlen(name), word);
        if (row == (size_t)-1)
            return CLI_ERROR;
        return give(sc, row, eq ? eq + 1 : NULL, i, word);
    }
    for (char *c = word + 1; *c; c++) {
        size_t row = short_row(sc, *c);
        if (row == (size_t)-1) {
            snprintf(sc->err, sc->errlen, "unknown option '-%c' (see mlbench %s --help)", *c,
                     sc->p->verb);
            return CLI_ERROR;
        }
        char written[3] = {'-', *c, '\0'};
        if (row == ROW_HELP || !words_of(row_at(sc, row))) {
            int rc = give(sc, row, NULL, i, written);
            if (rc != CLI_OK)
                return rc;
            continue;
        }
        /* the rest of the word is its value; a missing one is named as the user wrote it */
        return give(sc, row, c[1] ? c + 1 : NULL, i, c == word + 1 ? word : written);
    }
    return CLI_OK;
}

int cli_options_parse(const struct cli_parser *p, int argc, char **argv, struct cli_args *args,
                      char *err, size_t errlen)
{
    struct scan sc = {.p = p, .t = p->options, .argc = argc, .argv = argv, .err = err,
                      .errlen = errlen};
    while (sc.t[sc.n].name) {
        assert(sc.t[sc.n].short_name != 'h' && "-h is --help");
        assert(sc.t[sc.n].dest || sc.t[sc.n].kind == CLI_CALL);
        assert(words_of(&sc.t[sc.n]) <= CLI_MAX_WORDS);
        sc.n++;
    }
    /* the words that are options, then the arguments, each in their order */
    char **opts = xcalloc((size_t)argc + 1, sizeof *opts);
    char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
    int n_opts = 0, n_rest = 0, rc = CLI_OK, i = 1;
    for (; i < argc && rc == CLI_OK; i++) {
        char *word = argv[i];
        if (!strcmp(word, "--")) {
            opts[n_opts++] = word;
            i++;
            break;
        }
        if (word[0] != '-' || !word[1]) {
            if (p->flags & CLI_STOP_AT_ARG)
                break;
            rest[n_rest++] = word;
            continue;
        }
        int first = i;
        rc = option_word(&sc, &i);
        for (int k = first; k <= i && k < argc; k++)
            opts[n_opts++] = argv[k];
    }
    for (; i < argc && rc == CLI_OK; i++)
        rest[n_rest++] = argv[i];
    if (rc == CLI_OK) {
        memcpy(argv + 1, opts, (size_t)n_opts * sizeof *argv);
        memcpy(argv + 1 + n_opts, rest, (size_t)n_rest * sizeof *argv);
    }
    free(opts);
    free(rest);
    if (rc != CLI_OK)
        return rc;
    if ((p->flags & CLI_NO_ARGS) && n_rest) {
        snprintf(err, errlen, "unexpected argument '%s' (see mlbench %s --help)",
                 argv[1 + n_opts], p->verb);
        return CLI_ERROR;
    }
    args->v = argv + 1 + n_opts;
    args->n = n_rest;
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
