/* support.c: what the report formats share (see the second half of export.h): number
 * formatting with "-" for what was not measured, the chosen run and the check of --run, the
 * command that reproduces a result, stage colours, text cleaned of terminal controls, a
 * counter's rate and the latency table. Documents are read through doc/ (req->docs). */
#include "export/export.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

int export_finish(FILE *out, const char *what, char *err, size_t errlen)
{
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(err, errlen, "cannot write %s: %s", what, errno ? strerror(errno) : "I/O error");
        return EXPORT_EIO;
    }
    return EXPORT_OK;
}

/* ---- strings -------------------------------------------------------------------------- */

bool export_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !memcmp(s + (n - k), suffix, k);
}

/* ---- the chosen run ------------------------------------------------------------------- */

int export_chosen_run(const struct export_request *req, const struct doc_result *result)
{
    return req->run >= 0 ? req->run : doc_result_median_run(result);
}

int export_check_run(const struct export_request *req, char *err, size_t errlen)
{
    if (req->run < 0)
        return EXPORT_OK;
    for (size_t i = 0; i < req->n; i++) {
        size_t n = req->docs[i]->n_runs;
        if ((size_t)req->run >= n) {
            if (n == 0)
                snprintf(err, errlen, "--run %d: result %s has no runs", req->run,
                         doc_result_name(req->docs[i]));
            else
                snprintf(err, errlen, "--run %d: result %s has runs 0 to %zu (warm-up runs "
                         "first)", req->run, doc_result_name(req->docs[i]), n - 1);
            return EXPORT_EREQUEST;
        }
    }
    return EXPORT_OK;
}

/* ---- reproducing a result ------------------------------------------------------------- */

char *export_shell_quote(const char *s)
{
    bool plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                       "_@%+=:,./-", *p) != NULL;
    if (plain)
        return xstrdup(s);
    size_t quotes = 0;
    for (const char *p = s; *p; p++)
        quotes += *p == '\'';
    char *q = xmalloc(strlen(s) + 3 * quotes + 3);
    char *w = q;
    *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    *w++ = '\'';
    *w = '\0';
    return q;
}

static void sb_word(struct strbuf *b, const char *word)
{
    char *q = export_shell_quote(word);
    strbuf_puts(b, " ");
    strbuf_puts(b, q);
    free(q);
}

/* A time in seconds as an option value: "2.5s". */
static void sb_seconds(struct strbuf *b, const char *option, double s)
{
    char v[48];
    snprintf(v, sizeof v, "%.9gs", s);
    sb_word(b, option);
    sb_word(b, v);
}

char *export_shell_join(const char *const *words, size_t n)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *w = words[i];
        char *q = export_shell_quote(w ? w : "");
        strbuf_printf(&b, "%s%s", i ? " " : "", q);
        free(q);
    }
    return strbuf_take(&b);
}

/* A load result repeats the mlbench load command it recorded (load.command; results from
 * before it have none: then what the load section says, the rest left to the user). */
static char *load_command(const struct doc_load *load)
{
    if (load->n_command)
        return export_shell_join(load->command, load->n_command);
    struct strbuf b = STRBUF_INIT;
    strbuf_puts(&b, "mlbench load --scenario");
    sb_word(&b, str_or(load->scenario, "single-stream"));
    if (load->server_cmd) {
        sb_word(&b, "--server-cmd");
        sb_word(&b, load->server_cmd);
    }
    sb_word(&b, str_or(load->url, "URL"));
    return strbuf_take(&b);
}

char *export_reproduce_command(const struct doc_result *result, const struct doc_load *load)
{
    if (load && load->present)
        return load_command(load);
    struct strbuf b = STRBUF_INIT;
    const struct doc_config *cfg = &result->config;
    char v[48];
    if (doc_result_recorded(result)) {
        /* timed in-process (mlbench record): the command that ran the timer, run again */
        for (size_t i = 0; i < result->n_argv; i++) {
            const char *word = result->argv[i];
            char *q = export_shell_quote(word ? word : "?");
            if (b.len)
                strbuf_puts(&b, " ");
            strbuf_puts(&b, q);
            free(q);
        }
        if (!b.len)
            strbuf_puts(&b, "?");
        return strbuf_take(&b);
    }
    strbuf_puts(&b, "mlbench run");
    if (cfg->runs > 0) {
        snprintf(v, sizeof v, "%lld", cfg->runs);
        sb_word(&b, "-r");
        sb_word(&b, v);
    }
    if (cfg->warmup > 0) {
        snprintf(v, sizeof v, "%lld", cfg->warmup);
        sb_word(&b, "-w");
        sb_word(&b, v);
    }
    if (isfinite(cfg->timeout_s))
        sb_seconds(&b, "--timeout", cfg->timeout_s);
    if (isfinite(cfg->grace_s) && fabs(cfg->grace_s - 2.0) > 1e-9)
        sb_seconds(&b, "--grace", cfg->grace_s);
    /* An interval the user chose is repeated; the adaptive default (config.interval_adaptive,
     * absent in older results, whose default was a fixed 100 ms) is not. */
    long long interval = cfg->interval_ns;
    if (cfg->interval_adaptive >= 0 ? !cfg->interval_adaptive : interval != 100000000) {
        if (interval % 1000000 == 0)
            snprintf(v, sizeof v, "%lldms", interval / 1000000);
        else
            snprintf(v, sizeof v, "%.9gs", (double)interval / 1e9);
        sb_word(&b, "--interval");
        sb_word(&b, v);
    }
    const struct {
        const char *value, *option;
    } strings[] = {{cfg->prepare, "--prepare"}, {cfg->cleanup, "--cleanup"}};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        if (strings[i].value) {
            sb_word(&b, strings[i].option);
            sb_word(&b, strings[i].value);
        }
    }
    const struct {
        bool set;
        const char *option;
    } flags[] = {{cfg->fail_fast, "--fail-fast"}, {cfg->show_output, "--show-output"},
                 {cfg->all_gpus, "--all-gpus"}, {cfg->discard_throttled, "--discard-throttled"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].set)
            sb_word(&b, flags[i].option);
    double threshold = cfg->throttle_threshold; /* a share; 0.75 by default */
    if (isfinite(threshold) && fabs(threshold - 0.75) > 1e-9) {
        snprintf(v, sizeof v, "%.6g", 100 * threshold);
        sb_word(&b, "--throttle-threshold");
        sb_word(&b, v);
    }
    if (result->shell)
        sb_word(&b, "--shell");
    if (result->label) {
        sb_word(&b, "-l");
        sb_word(&b, result->label);
    }
    strbuf_puts(&b, " --");
    for (size_t i = 0; i < result->n_argv; i++)
        sb_word(&b, result->argv[i] ? result->argv[i] : "");
    return strbuf_take(&b);
}

/* ---- formatting ----------------------------------------------------------------------- */

char *export_fmt_duration(double ns, char *buf, size_t len)
{
    if (!isfinite(ns)) {
        snprintf(buf, len, "-");
        return buf;
    }
    return units_duration(ns, buf, len);
}

char *export_fmt_bytes(double bytes, char *buf, size_t len)
{
    if (!isfinite(bytes)) {
        snprintf(buf, len, "-");
        return buf;
    }
    return units_bytes(bytes, buf, len);
}

char *export_fmt_num(double v, const char *fmt, double scale, char *buf, size_t len)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(buf, len, fmt, v * scale);
#pragma GCC diagnostic pop
    return buf;
}

char *export_fmt_exact(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, len, "%.17g", v);
    return buf;
}

char *export_fmt_value(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, len, "%.6g", json_real_value(v));
    } else if (json_is_true(v) || json_is_false(v)) {
        snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
    } else if (!v || json_is_null(v)) {
        snprintf(buf, len, "-");
    } else {
        char *s = json_dumps(v, JSON_COMPACT);
        snprintf(buf, len, "%s", s ? s : "?");
        free(s);
    }
    return buf;
}

/* ---- stage colours -------------------------------------------------------------------- */

/* Whether name is a stage of a result before i, or of result i before its stage j. */
static bool stage_seen_before(const struct export_request *req, size_t i, size_t j,
                              const char *name)
{
    for (size_t a = 0; a <= i; a++) {
        const struct doc_summary *s = &req->docs[a]->summary;
        size_t lim = a == i ? j : s->n_stages;
        for (size_t b = 0; b < lim; b++)
            if (s->stages[b].name && !strcmp(s->stages[b].name, name))
                return true;
    }
    return false;
}

size_t export_stage_colour(const struct export_request *req, const char *name)
{
    /* distinct names in order of first appearance; name's position among them */
    size_t k = 0;
    for (size_t i = 0; i < req->n; i++) {
        const struct doc_summary *s = &req->docs[i]->summary;
        for (size_t j = 0; j < s->n_stages; j++) {
            const char *n = s->stages[j].name;
            if (!n)
                continue;
            if (!strcmp(n, name))
                return k;
            if (!stage_seen_before(req, i, j, n))
                k++;
        }
    }
    return k;
}

char *export_clean(const char *s)
{
    /* the output is never longer than the input: each replaced sequence becomes one '?' */
    size_t len = strlen(s);
    char *out = xcalloc(len + 1, 1);
    FILE *m = fmemopen(out, len + 1, "w");
    if (m) {
        setvbuf(m, NULL, _IONBF, 0);
        term_clean(m, s, len);
        fclose(m);
    }
    return out;
}

/* A rate per second: 4 significant digits, whole numbers from 10 000 up (not 1.054e+04). */
static const char *fmt_rate(double v, char *buf, size_t len)
{
    snprintf(buf, len, fabs(v) >= 1e4 && isfinite(v) ? "%.0f/s" : "%.4g/s", v);
    return buf;
}

char *export_fmt_counter_rate(const struct doc_counter *counter, char *buf, size_t len)
{
    char a[40], b[40];
    double rate = counter->rate_per_s_median, in_stage = counter->stage_rate_per_s_median;
    if (counter->stage && isfinite(in_stage))
        snprintf(buf, len, "%s in %s, %s over the run", fmt_rate(in_stage, a, sizeof a),
                 counter->stage, fmt_rate(rate, b, sizeof b));
    else if (counter->stage_mixed)
        snprintf(buf, len, "%s over the run (sent in several stages)", fmt_rate(rate, b, sizeof b));
    else
        snprintf(buf, len, "%s over the run", fmt_rate(rate, b, sizeof b));
    return buf;
}

void export_latency_table(struct export_table *t, const struct doc_summary *s)
{
    export_table_init(t, 7, "stage", "spans", "p50", "p90", "p99", "p99.9", "max");
    t->numeric = 0x7e;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        const struct doc_spans *sp = &st->spans;
        if (sp->n < EXPORT_LATENCY_MIN_SPANS)
            continue;
        size_t row = export_table_row(t, st->depth);
        char v[32];
        export_table_set(t, row, 0, "%s", st->name ? st->name : "?");
        export_table_set(t, row, 1, "%lld", sp->n);
        const double q[] = {sp->p50_ns, sp->p90_ns, sp->p99_ns, sp->p999_ns, sp->max_ns};
        for (size_t k = 0; k < sizeof q / sizeof q[0]; k++)
            export_table_set(t, row, k + 2, "%s", export_fmt_duration(q[k], v, sizeof v));
    }
}
