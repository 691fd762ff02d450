/* cmd_report: `mlbench report RUN [RUN...]`: resolves the references (files or the store),
 * loads the results, compares them when there are several (analysis/compare.c), and writes a report
 * in one of the formats of src/export/ to stdout or, atomically, to -o FILE (docs/reports.md).
 * Exit status: 0; 2 for bad options, a result that cannot be found or read, or an output path
 * that cannot be written; 3 when writing the report failed midway. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "analysis/compare.h"
#include "util/log.h"
#include "doc/result_file.h"
#include "util/xalloc.h"
#include "export/export.h"
#include "store/store.h"
#include "store/sweeps.h"
#include "util/term.h"

/* The prose of --help, above and below the options (the rows of parse_args). */
static const char usage_text[] =
    "Usage: mlbench report [options] RUN [RUN...]\n"
    "\n"
    "Writes a report of a result, or with several a comparison of the others against the\n"
    "first. RUN is a file (a path with '/' or ending in .json), or in the store: an id, a\n"
    "unique id prefix, a label (its newest result) or 'latest'. A sweep document file\n"
    "(<store>/sweeps/ID.json) is reported alone: its table and charts, then its points'\n"
    "results compared against the first.\n";
static const char tail_text[] =
    "Exit status: 0; 2 for bad options, a result that cannot be found or read, or an\n"
    "output that cannot be created; 3 when writing failed. See docs/reports.md.\n";

/* The help of --format: the formats of the export table, one a line; made once, never
 * freed. */
static const char *format_help(void)
{
    static char *text;
    if (text)
        return text;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        abort();
    fputs("the format (default: from the extension of -o, else md):", out);
    for (size_t i = 0; export_at(i); i++)
        fprintf(out, "\n  %-6s %s", export_at(i)->name, export_at(i)->description);
    if (fclose(out) != 0)
        abort();
    return text;
}

struct report_cli {
    const struct exporter *exporter;
    const char *output;  /* NULL or "-": stdout */
    int run;
    const char *table;
    const char *store;
    struct compare_options cmp;
    char **refs;
    size_t n_refs;
};

/* -o: "" is neither a file nor stdout. */
static int check_output(const char *value, char *err, size_t errlen)
{
    if (*value)
        return 0;
    snprintf(err, errlen, "-o is empty: give a file name, or - for stdout");
    return -1;
}

/* What the options cannot say alone: a result to report, the format (--format, else -o's
 * extension, else md) and the options that apply to it. Sets c->exporter. Returns 0, or -1
 * with the message in err. */
static int check_args(struct report_cli *c, const char *format, char *err, size_t errlen)
{
    if (c->n_refs == 0) {
        snprintf(err, errlen, "report needs a result: a file, an id, a label or 'latest' "
                 "(e.g. mlbench report latest)");
        return -1;
    }
    if (format) {
        c->exporter = export_find(format);
        if (!c->exporter) {
            snprintf(err, errlen, "--format '%s' is not a format: md, html, trace or csv",
                     format);
            return -1;
        }
    } else {
        c->exporter = c->output ? export_for_path(c->output) : NULL;
        if (!c->exporter)
            c->exporter = export_find("md");
    }
    if (c->table && !(c->exporter->uses & EXPORT_USES_TABLE)) {
        snprintf(err, errlen, "--table applies to --format csv, not %s", c->exporter->name);
        return -1;
    }
    if (c->run >= 0 && !(c->exporter->uses & EXPORT_USES_RUN)) {
        snprintf(err, errlen, "--run applies to --format html, trace and csv, not %s",
                 c->exporter->name);
        return -1;
    }
    return 0;
}

/* Returns true when the command goes on; false with the exit status in *status (after the
 * help or the message). */
static bool parse_args(int argc, char **argv, struct report_cli *c, int *status)
{
    memset(c, 0, sizeof *c);
    c->run = -1;
    c->store = store_default_dir();
    compare_options_default(&c->cmp);
    const char *format = NULL;

    const struct cli_option table[] = {
        CLI_OPT_STRING("format", 'f', &format, 0, NULL, .metavar = "FMT",
                       .help = format_help()),
        CLI_OPT_STRING_CHECKED("output", 'o', &c->output, 0, check_output, NULL,
                               .metavar = "FILE",
                               .help = "write to FILE (replaced atomically) instead of stdout"),
        CLI_OPT_INTEGER("run", 0, &c->run, 0, 1000000, 0,
                        "is not a run index (0, 1, ...; warm-up runs come first)",
                        .metavar = "N",
                        .help = "html: draw the timelines of run N (default: the median run); "
                                "trace, csv --table samples: only run N (0-based, warm-up runs "
                                "first)"),
        CLI_OPT_STRING("table", 0, &c->table, 0, NULL, .metavar = "T",
                       .help = "csv: stages (default), runs, samples, comparison, or sweep (the "
                               "default for a sweep)"),
        CLI_OPT_STORE(&c->store),
        CLI_OPT_ALPHA(&c->cmp.alpha),
        CLI_OPT_MIN_EFFECT(&c->cmp.min_effect_pct),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "report", .options = table, .usage = usage_text,
                                      .tail = tail_text};
    struct cli_args args;
    if (!cli_parse_args(&parser, argc, argv, &args, status))
        return false;
    c->refs = args.v;
    c->n_refs = (size_t)args.n;
    char err[1024];
    if (check_args(c, format, err, sizeof err) < 0) {
        log_error("report: %s", err);
        *status = 2;
        return false;
    }
    return true;
}

/* An open output: stdout, or a temporary file beside the destination that is renamed over it
 * once complete, so a reader never sees half a report. */
struct output {
    FILE *f;
    char *tmp;          /* NULL for stdout */
    const char *path;
    char *screen;       /* stdout is a terminal: the report is composed here, then cleaned */
    size_t screen_len;
};

static int output_open(struct output *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        /* On a terminal, names from result files must not drive it: composed in memory and
         * written through term_clean. A pipe or a file gets the report's bytes as they are. */
        o->f = isatty(STDOUT_FILENO) ? open_memstream(&o->screen, &o->screen_len) : NULL;
        if (!o->f)
            o->f = stdout;
        return 0;
    }
    o->path = path;
    const char *slash = strrchr(path, '/');
    if (slash)
        o->tmp = xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
    else
        o->tmp = xasprintf(".%s.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        free(o->tmp);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        return -1;
    }
    return 0;
}

/* Completes (ok) or abandons the output. Returns 0, or -1 with err when it could not be
 * completed. */
static int output_close(struct output *o, int ok, char *err, size_t errlen)
{
    if (!o->tmp) {
        if (o->f != stdout) {
            if (fclose(o->f) == 0 && ok)
                term_clean(stdout, o->screen, o->screen_len);
            free(o->screen);
        }
        if (fflush(stdout) != 0 && ok) {
            snprintf(err, errlen, "cannot write to stdout: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    int rc = 0;
    if (ok && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0)) {
        snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (fclose(o->f) != 0 && ok && rc == 0) {
        snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (ok && rc == 0 && rename(o->tmp, o->path) != 0) {
        snprintf(err, errlen, "cannot replace %s: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (!ok || rc != 0)
        unlink(o->tmp);
    free(o->tmp);
    return rc;
}

/* The sweep c->refs[0] names: sweep:ID, latest-sweep, or a file whose schema says it is one;
 * NULL when it names a result instead (or, *status set to 2, a sweep that cannot be read). */
static json_t *sweep_of(const struct report_cli *c, char **sweep_path, int *status)
{
    char err[1024];
    const char *ref = c->refs[0];
    bool named = store_is_sweep_ref(ref);
    size_t len = strlen(ref);
    if (!named && !strchr(ref, '/') && !(len >= 5 && !strcmp(ref + len - 5, ".json")))
        return NULL;
    json_t *sweep = store_sweep_load(c->store, ref, sweep_path, err, sizeof err);
    if (!sweep && named) {
        log_error("report: %s", err);
        *status = 2;
    }
    return sweep; /* a file that is no sweep is read as a result, which says what is wrong */
}

/* The results of the sweep's points, in the sweep's order (store_sweep_results); a result that
 * cannot be read is left out with a warning. Returns how many were loaded, or (size_t)-1 after
 * saying why the sweep's points cannot be found. */
static size_t sweep_results(const json_t *sweep, const char *sweep_path, const char *store,
                            json_t ***results, char ***paths)
{
    char err[1024];
    const char **names;
    size_t n;
    if (store_sweep_results(sweep, sweep_path, store, NULL, paths, &names, &n, err,
                            sizeof err) != 0) {
        log_error("report: %s", err);
        return (size_t)-1;
    }
    free(names);
    *results = xcalloc(n + 1, sizeof **results);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *r = doc_result_load_file((*paths)[i], err, sizeof err);
        if (!r) {
            log_warn("report: a point of the sweep: %s; left out", err);
            free((*paths)[i]);
            continue;
        }
        (*results)[k] = r;
        (*paths)[k++] = (*paths)[i];
    }
    return k;
}

int cmd_report(int argc, char **argv)
{
    char err[1024];
    struct report_cli c;
    int rc;
    if (!parse_args(argc, argv, &c, &rc))
        return rc;

    json_t **results = NULL;
    char **paths = NULL;
    json_t *comparison = NULL;
    int status = 0;
    size_t n = c.n_refs;
    char *sweep_path = NULL;
    json_t *sweep = sweep_of(&c, &sweep_path, &status);
    if (status)
        return status;
    if (sweep && c.n_refs > 1) {
        log_error("report: %s is a sweep: report it alone (its points are compared with each "
                  "other)", c.refs[0]);
        json_decref(sweep);
        free(sweep_path);
        return 2;
    }
    if (sweep) {
        n = sweep_results(sweep, sweep_path, c.store, &results, &paths);
        free(sweep_path);
        if (n == (size_t)-1) {
            json_decref(sweep);
            return 2;
        }
    } else {
        results = xcalloc(n, sizeof *results);
        paths = xcalloc(n, sizeof *paths);
    }
    for (size_t i = 0; !sweep && i < n && status == 0; i++) {
        if (!(results[i] = store_load(c.store, c.refs[i], &paths[i], err, sizeof err))) {
            log_error("report: %s", err);
            status = store_exit_status();
        }
    }
    if (status == 0 && n >= 2) {
        comparison = compare_results(results, (const char *const *)paths, n, &c.cmp);
        if (!comparison) {
            log_error("report: the results could not be compared (--alpha or --min-effect out "
                      "of range)");
            status = 2;
        }
    }
    struct output out;
    if (status == 0 && output_open(&out, c.output, err, sizeof err) != 0) {
        log_error("report: %s", err);
        status = 2;
    }
    if (status == 0) {
        struct export_request req = {
            .results = results,
            .paths = (const char *const *)paths,
            .n = n,
            .comparison = comparison,
            .run = c.run,
            .table = c.table,
            .sweep = sweep,
        };
        rc = export_write(c.exporter, out.f, &req, err, sizeof err);
        if (rc == EXPORT_EIO && out.path) { /* the exporter knows the stream, not the file */
            log_error("report: %s: %s", out.path, err);
            status = 3;
        } else if (rc != EXPORT_OK) {
            log_error("report: %s", err);
            status = rc == EXPORT_EREQUEST ? 2 : 3;
        }
        if (output_close(&out, rc == EXPORT_OK, err, sizeof err) != 0) {
            log_error("report: %s", err);
            status = 3;
        }
    }
    json_decref(comparison);
    json_decref(sweep);
    for (size_t i = 0; i < n; i++) {
        json_decref(results[i]);
        free(paths[i]);
    }
    free(results);
    free(paths);
    return status;
}
