/* support.c: what the report formats share (see the second half of export.h): JSON accessors
 * that tolerate missing members, number formatting with "-" for what was not measured, the
 * representative run, the command that reproduces a result, a load run's name and whether it
 * counts, stage colours, sampled series, per-stage resource figures, a growing string and the
 * text table the outline fills. */
#include "export/export.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
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

/* ---- JSON accessors ------------------------------------------------------------------- */

bool export_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !memcmp(s + (n - k), suffix, k);
}

void export_lines_free(struct export_lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

const char *export_result_name(const json_t *result)
{
    const char *label = jsonx_str(result, "label");
    if (label && *label)
        return label;
    const char *id = jsonx_str(result, "id");
    return id ? id : "(no id)";
}

/* ---- the representative run ----------------------------------------------------------- */

struct run_wall {
    int index;
    double wall_ns;
};

static int by_wall(const void *a, const void *b)
{
    const struct run_wall *x = a, *y = b;
    if (x->wall_ns != y->wall_ns)
        return x->wall_ns < y->wall_ns ? -1 : 1;
    return x->index - y->index;
}

int export_median_run(const json_t *result)
{
    const json_t *runs = json_object_get(result, "runs");
    size_t n = json_array_size(runs);
    if (n == 0)
        return -1;
    struct run_wall *c = xcalloc(n, sizeof *c);
    size_t nc = 0;
    /* pass 0: measured and ok; 1: measured; 2: any */
    for (int pass = 0; pass < 3 && nc == 0; pass++) {
        for (size_t i = 0; i < n; i++) {
            const json_t *r = json_array_get(runs, i);
            int warmup = json_is_true(json_object_get(r, "warmup"));
            const char *status = jsonx_str(r, "status");
            if (pass < 2 && warmup)
                continue;
            if (pass == 0 && !(status && !strcmp(status, "ok")))
                continue;
            double wall = jsonx_num(r, "wall_ns");
            c[nc].index = (int)i;
            c[nc].wall_ns = isfinite(wall) ? wall : 0;
            nc++;
        }
    }
    qsort(c, nc, sizeof *c, by_wall);
    int index = c[(nc - 1) / 2].index;
    free(c);
    return index;
}

int export_chosen_run(const struct export_request *req, const json_t *result)
{
    return req->run >= 0 ? req->run : export_median_run(result);
}

int export_check_run(const struct export_request *req, char *err, size_t errlen)
{
    if (req->run < 0)
        return EXPORT_OK;
    for (size_t i = 0; i < req->n; i++) {
        size_t n = json_array_size(json_object_get(req->results[i], "runs"));
        if ((size_t)req->run >= n) {
            if (n == 0)
                snprintf(err, errlen, "--run %d: result %s has no runs", req->run,
                         export_result_name(req->results[i]));
            else
                snprintf(err, errlen, "--run %d: result %s has runs 0 to %zu (warm-up runs "
                         "first)", req->run, export_result_name(req->results[i]), n - 1);
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

char *export_shell_join(const json_t *argv)
{
    struct strbuf b = {0};
    strbuf_puts(&b, "");
    for (size_t i = 0; i < json_array_size(argv); i++) {
        const char *w = json_string_value(json_array_get(argv, i));
        char *q = export_shell_quote(w ? w : "");
        strbuf_printf(&b, "%s%s", i ? " " : "", q);
        free(q);
    }
    return b.s;
}

/* A load result repeats the mlbench load command it recorded (load.command; results from
 * before it have none: then what the load section says, the rest left to the user). */
static char *load_command(const json_t *load)
{
    const json_t *argv = json_object_get(load, "command");
    if (json_array_size(argv))
        return export_shell_join(argv);
    struct strbuf b = {0};
    strbuf_puts(&b, "mlbench load --scenario");
    sb_word(&b, jsonx_str(load, "scenario") ? jsonx_str(load, "scenario") : "single-stream");
    if (jsonx_str(load, "server_cmd")) {
        sb_word(&b, "--server-cmd");
        sb_word(&b, jsonx_str(load, "server_cmd"));
    }
    sb_word(&b, jsonx_str(load, "url") ? jsonx_str(load, "url") : "URL");
    return b.s;
}

char *export_reproduce_command(const json_t *result)
{
    if (json_is_object(json_object_get(result, "load")))
        return load_command(json_object_get(result, "load"));
    struct strbuf b = {0};
    const json_t *cfg = json_object_get(result, "config");
    const json_t *cmd = json_object_get(result, "command");
    char v[48];
    if (json_is_object(json_object_get(cfg, "timings"))) {
        /* timed in-process (mlbench record): the command that ran the timer, run again */
        const json_t *argv = json_object_get(cmd, "argv");
        for (size_t i = 0; i < json_array_size(argv); i++) {
            const char *word = json_string_value(json_array_get(argv, i));
            char *q = export_shell_quote(word ? word : "?");
            if (b.len)
                strbuf_puts(&b, " ");
            strbuf_puts(&b, q);
            free(q);
        }
        if (!b.len)
            strbuf_puts(&b, "?");
        return b.s;
    }
    strbuf_puts(&b, "mlbench run");
    long long runs = jsonx_int(cfg, "runs", -1);
    if (runs > 0) {
        snprintf(v, sizeof v, "%lld", runs);
        sb_word(&b, "-r");
        sb_word(&b, v);
    }
    long long warmup = jsonx_int(cfg, "warmup", 0);
    if (warmup > 0) {
        snprintf(v, sizeof v, "%lld", warmup);
        sb_word(&b, "-w");
        sb_word(&b, v);
    }
    if (isfinite(jsonx_num(cfg, "timeout_s")))
        sb_seconds(&b, "--timeout", jsonx_num(cfg, "timeout_s"));
    double grace = jsonx_num(cfg, "grace_s");
    if (isfinite(grace) && fabs(grace - 2.0) > 1e-9)
        sb_seconds(&b, "--grace", grace);
    /* An interval the user chose is repeated; the adaptive default (config.interval_adaptive,
     * absent in older results, whose default was a fixed 100 ms) is not. */
    long long interval = jsonx_int(cfg, "interval_ns", 100000000);
    const json_t *adaptive = json_object_get(cfg, "interval_adaptive");
    if (json_is_boolean(adaptive) ? !json_is_true(adaptive) : interval != 100000000) {
        if (interval % 1000000 == 0)
            snprintf(v, sizeof v, "%lldms", interval / 1000000);
        else
            snprintf(v, sizeof v, "%.9gs", (double)interval / 1e9);
        sb_word(&b, "--interval");
        sb_word(&b, v);
    }
    static const struct {
        const char *key, *option;
    } strings[] = {{"prepare", "--prepare"}, {"cleanup", "--cleanup"}};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        const char *s = jsonx_str(cfg, strings[i].key);
        if (s) {
            sb_word(&b, strings[i].option);
            sb_word(&b, s);
        }
    }
    static const struct {
        const char *key, *option;
    } flags[] = {{"fail_fast", "--fail-fast"}, {"show_output", "--show-output"},
                 {"all_gpus", "--all-gpus"}, {"discard_throttled", "--discard-throttled"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (json_is_true(json_object_get(cfg, flags[i].key)))
            sb_word(&b, flags[i].option);
    double threshold = jsonx_num(cfg, "throttle_threshold"); /* a share; 0.75 by default */
    if (isfinite(threshold) && fabs(threshold - 0.75) > 1e-9) {
        snprintf(v, sizeof v, "%.6g", 100 * threshold);
        sb_word(&b, "--throttle-threshold");
        sb_word(&b, v);
    }
    if (json_is_true(json_object_get(cmd, "shell")))
        sb_word(&b, "--shell");
    const char *label = jsonx_str(result, "label");
    if (label) {
        sb_word(&b, "-l");
        sb_word(&b, label);
    }
    strbuf_puts(&b, " --");
    const json_t *argv = json_object_get(cmd, "argv");
    for (size_t i = 0; i < json_array_size(argv); i++) {
        const char *w = json_string_value(json_array_get(argv, i));
        sb_word(&b, w ? w : "");
    }
    return b.s;
}

/* ---- load results --------------------------------------------------------------------- */

bool export_load_counts(const json_t *load, size_t index)
{
    const json_t *runs = json_object_get(load, "scenarios");
    const char *role = jsonx_str(json_array_get(runs, index), "role");
    if (role && !strcmp(role, "probe"))
        return false;
    if (!json_is_object(json_object_get(load, "find_peak")))
        return true;
    for (size_t k = index + 1; k < json_array_size(runs); k++) {
        const char *later = jsonx_str(json_array_get(runs, k), "role");
        if (!later || strcmp(later, "probe"))
            return false;
    }
    return true;
}

void export_load_run_name(const json_t *run, char *buf, size_t len)
{
    double q = jsonx_num(run, "target_qps");
    const char *role = str_or(jsonx_str(run, "role"), "run");
    const char *scen = str_or(jsonx_str(run, "scenario"), "?");
    if (isfinite(q))
        snprintf(buf, len, "%s %s at %.4g QPS", scen, role, q);
    else
        snprintf(buf, len, "%s %s", scen, role);
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

/* ---- stage colours and series --------------------------------------------------------- */

/* Whether name is a stage of a result before i, or of result i before its stage j. */
static bool stage_seen_before(const struct export_request *req, size_t i, size_t j,
                              const char *name)
{
    for (size_t a = 0; a <= i; a++) {
        const json_t *stages = json_object_get(json_object_get(req->results[a], "summary"),
                                               "stages");
        size_t lim = a == i ? j : json_array_size(stages);
        for (size_t b = 0; b < lim; b++) {
            const char *s = jsonx_str(json_array_get(stages, b), "name");
            if (s && !strcmp(s, name))
                return true;
        }
    }
    return false;
}

size_t export_stage_colour(const struct export_request *req, const char *name)
{
    /* distinct names in order of first appearance; name's position among them */
    size_t k = 0;
    for (size_t i = 0; i < req->n; i++) {
        const json_t *stages = json_object_get(json_object_get(req->results[i], "summary"),
                                               "stages");
        for (size_t j = 0; j < json_array_size(stages); j++) {
            const char *s = jsonx_str(json_array_get(stages, j), "name");
            if (!s)
                continue;
            if (!strcmp(s, name))
                return k;
            if (!stage_seen_before(req, i, j, s))
                k++;
        }
    }
    return k;
}

json_t *export_series_find(const json_t *run, const char *metric, const char *labels)
{
    const json_t *series = json_object_get(json_object_get(run, "samples"), "series");
    for (size_t i = 0; i < json_array_size(series); i++) {
        json_t *s = json_array_get(series, i);
        const char *m = jsonx_str(s, "metric");
        const char *l = jsonx_str(s, "labels");
        if (m && !strcmp(m, metric) && (!labels || (l && !strcmp(l, labels))))
            return s;
    }
    return NULL;
}

/* ---- resources and shares ------------------------------------------------------------ */

const json_t *export_resource_find(const json_t *resources, const char *metric,
                                   const char *labels)
{
    for (size_t i = 0; i < json_array_size(resources); i++) {
        const json_t *x = json_array_get(resources, i);
        const char *m = jsonx_str(x, "metric"), *l = jsonx_str(x, "labels");
        if (m && !strcmp(m, metric) && (!labels || (l && !strcmp(l, labels))))
            return x;
    }
    return NULL;
}

/* GPU figures over the GPUs in gpus: mean utilisation averaged, memory peak of the busiest,
 * power added up (as resources.c computes them for the analysis). */
static void gpu_figures(const json_t *resources, const json_t *gpus,
                        struct export_stage_figures *f)
{
    double u = 0, p = 0, sm = 0;
    int nu = 0, np = 0, nsm = 0;
    for (size_t g = 0; g < json_array_size(gpus); g++) {
        char labels[32];
        snprintf(labels, sizeof labels, "gpu=\"%lld\"",
                 (long long)json_integer_value(json_array_get(gpus, g)));
        double v = jsonx_num(
            export_resource_find(resources, "gpu_utilization_ratio", labels), "mean");
        if (isfinite(v))
            u += v, nu++;
        v = jsonx_num(export_resource_find(resources, "gpu_sm_active_ratio", labels), "mean");
        if (isfinite(v))
            sm += v, nsm++;
        v = jsonx_num(export_resource_find(resources, "gpu_power_watts", labels), "mean");
        if (isfinite(v))
            p += v, np++;
        v = jsonx_num(export_resource_find(resources, "gpu_memory_used_bytes", labels),
                           "peak");
        if (isfinite(v) && !(f->gpu_mem_peak_bytes >= v))
            f->gpu_mem_peak_bytes = v;
    }
    f->gpu_util = nu ? u / nu : NAN;
    f->gpu_sm_active = nsm ? sm / nsm : NAN;
    f->gpu_power_watts = np ? p : NAN;
}

void export_stage_figures(const json_t *resources, const json_t *gpus,
                          struct export_stage_figures *f)
{
    f->cpu_cores = jsonx_num(
        export_resource_find(resources, "process_cpu_seconds_total", NULL), "mean");
    f->rss_peak_bytes = jsonx_num(
        export_resource_find(resources, "process_resident_bytes", NULL), "peak");
    f->read_bps = jsonx_num(
        export_resource_find(resources, "process_read_bytes_total", NULL), "mean");
    f->write_bps = jsonx_num(
        export_resource_find(resources, "process_written_bytes_total", NULL), "mean");
    f->iowait = jsonx_num(
        export_resource_find(resources, "system_cpu_iowait_ratio", NULL), "mean");
    f->samples = 0;
    for (size_t i = 0; i < json_array_size(resources); i++) {
        long long n = jsonx_int(json_array_get(resources, i), "n", 0);
        if (n > 0 && (size_t)n > f->samples)
            f->samples = (size_t)n;
    }
    f->gpu_mem_peak_bytes = NAN;
    gpu_figures(resources, gpus, f);
}

double export_stage_share(const json_t *r, const char *stage)
{
    if (!strcmp(stage, "total"))
        return 1;
    const json_t *stages = json_object_get(json_object_get(r, "summary"), "stages");
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        const char *name = jsonx_str(st, "name");
        if (name && !strcmp(name, stage))
            return jsonx_num(st, "share");
    }
    return NAN;
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

int export_stage_depth(const json_t *stage)
{
    long long d = jsonx_int(stage, "depth", 0);
    return d < 0 ? 0 : d > EXPORT_MAX_DEPTH ? EXPORT_MAX_DEPTH : (int)d;
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
