/* load_text.c: the terminal view of a load result (export_load_print, load_text.h), read
 * through doc/load.h; its run table is drawn by the table renderer (table_text.c) in parts, so
 * that the reasons of an INVALID run stand under its row. */
#include "export/load_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "doc/load.h"
#include "doc/result.h"
#include "export/table.h"
#include "export/text.h"
#include "util/units.h"

/* The run table's columns as the summary has always laid them out: printf widths, one blank
 * between the figures, two before the verdict. */
static const struct export_text_column run_columns[] = {
    {.width = 8, .sep = "  "}, {.width = 10, .sep = " "}, {.width = 10, .sep = " "},
    {.width = 9, .sep = " "}, {.width = 9, .sep = " "}, {.width = 9, .sep = " "},
    {.width = 9, .sep = " "}, {.width = 9, .sep = " "}, {.width = 9, .sep = " "},
    {.sep = "  "},
};
#define RUN_COLUMNS (sizeof run_columns / sizeof run_columns[0])

/* A duration in seconds for people, or "-" when absent. */
static const char *secs(double s, char *buf, size_t len)
{
    return isfinite(s) ? units_duration(s * 1e9, buf, len) : "-";
}

static bool is_probe(const struct doc_load_run *r)
{
    return r->role && strcmp(r->role, "probe") == 0;
}

/* The table of the scenario runs, one row each. A probe is judged by the bound alone (its
 * reasons are in the result). */
static void run_table(struct export_table *t, const struct doc_load *l)
{
    export_table_init(t, RUN_COLUMNS, "run", "target", "QPS", "p50", "p90", "p99", "p99.9", "max",
                      "early", "verdict", NULL);
    t->numeric = ((1u << (RUN_COLUMNS - 1)) - 1) & ~1u; /* all but the role and the verdict */
    for (size_t i = 0; i < l->n_runs; i++) {
        const struct doc_load_run *r = &l->runs[i];
        const struct doc_latency *lat = &r->latency;
        size_t row = export_table_row(t, 0);
        char b[32];
        export_table_set(t, row, 0, "%s", r->role ? r->role : "?");
        if (isfinite(r->target_qps))
            export_table_set(t, row, 1, "%.4g", r->target_qps);
        else
            export_table_set(t, row, 1, "-");
        if (isfinite(r->throughput_qps))
            export_table_set(t, row, 2, "%.1f", r->throughput_qps);
        else
            export_table_set(t, row, 2, "-");
        const double figures[] = {lat->p50, lat->p90, lat->p99, lat->p999, lat->max, r->early_estimate_s};
        for (size_t k = 0; k < sizeof figures / sizeof figures[0]; k++)
            export_table_set(t, row, 3 + k, "%s", secs(figures[k], b, sizeof b));
        export_table_set(t, row, 9, "%s", is_probe(r) ? (r->met_bound == 1 ? "met" : "missed")
                                          : r->valid ? "VALID" : "INVALID");
    }
}

/* The rows [from, to) of the run table (to 0: all of them), after the header when from is 0. */
static void run_rows(FILE *f, const struct export_table *t, size_t from, size_t to)
{
    const struct export_text_layout layout = {.col = run_columns, .header = from == 0, .trim = true,
                                              .rows_from = from, .rows_to = to};
    export_table_print(f, t, &layout);
}

/* The server's side of the run that counts (the last one): its resources, then its markers. */
static void print_server(FILE *f, const struct doc_load_run *x)
{
    const struct doc_load_server *sv = &x->server;
    if (!isfinite(sv->cpu_cores))
        return;
    char b[4][32];
    fprintf(f, "  server (%s): %.2f of %ld CPU cores, resident at most %s", x->role ? x->role : "?",
            sv->cpu_cores, sysconf(_SC_NPROCESSORS_ONLN),
            units_bytes(sv->resident_bytes_max, b[0], 32));
    if (isfinite(sv->gpu_utilization_ratio))
        fprintf(f, ", GPU busy %.0f %%", sv->gpu_utilization_ratio * 100);
    fputc('\n', f);
    if (!sv->batch.present && !sv->compute.present && !isfinite(sv->queue_wait_s))
        return;
    fputs("          markers:", f);
    if (sv->batch.present)
        fprintf(f, " %lld batches of %s", sv->batch.count, secs(sv->batch.mean_s, b[1], 32));
    if (isfinite(sv->batch_size))
        fprintf(f, " (%.2f images each)", sv->batch_size);
    if (sv->compute.present)
        fprintf(f, ", compute %s", secs(sv->compute.mean_s, b[2], 32));
    if (isfinite(sv->queue_wait_s))
        fprintf(f, ", queue wait %s", units_duration(sv->queue_wait_s * 1e9, b[3], 32));
    fputs(" (means)\n", f);
}

static void load_text(FILE *f, const json_t *doc, const char *path)
{
    struct doc_load *l = doc_load_read_result(doc);
    fprintf(f, "\nmlbench load %s: %s, %lld connection(s)\n", l->url ? l->url : "?",
            l->scenario ? l->scenario : "?", l->connections);
    struct export_table t;
    run_table(&t, l);
    if (!l->n_runs)
        run_rows(f, &t, 0, 0); /* the header alone */
    for (size_t i = 0; i < l->n_runs; i++) {
        run_rows(f, &t, i, i + 1);
        const json_t *why = is_probe(&l->runs[i]) ? NULL : l->runs[i].invalid_reasons;
        for (size_t k = 0; k < json_array_size(why); k++) {
            const char *s = json_string_value(json_array_get(why, k));
            fprintf(f, "           - %s\n", s ? s : "?");
        }
    }
    export_table_free(&t);
    if (l->find_peak) {
        char b[32];
        if (isfinite(l->peak_qps))
            fprintf(f, "  peak: %.4g QPS with p%g within %s (%lld probes, then %lld full-length run%s)\n",
                    l->peak_qps, l->peak_percentile, secs(l->peak_latency_bound_s, b, sizeof b),
                    l->peak_probes, l->peak_confirmations, l->peak_confirmations == 1 ? "" : "s");
        else
            fprintf(f, "  peak: no rate met the bound %s\n", secs(l->peak_latency_bound_s, b, sizeof b));
    }
    if (l->n_runs)
        print_server(f, &l->runs[l->n_runs - 1]);
    if (l->bound_kind)
        fprintf(f, "  bound: %s: %s\n", l->bound_kind, l->bound_evidence ? l->bound_evidence : "?");
    fprintf(f, "  %s", l->valid ? "VALID" : "INVALID");
    if (path)
        fprintf(f, "; result %s", path);
    fputc('\n', f);
    doc_load_free(l);
}

int export_load_print(FILE *out, const json_t *doc, const char *path)
{
    return export_text_compose(out, load_text, doc, path);
}

/* A line naming the stored result doc, then its load view. */
static void stored_text(FILE *f, const json_t *doc, const char *path)
{
    struct doc_result *r = doc_result_read(doc);
    char line[512];
    int len = snprintf(line, sizeof line, "result %s   created %s%s%.200s\n",
                       r->id ? r->id : "?", r->created ? r->created : "?",
                       r->label ? "   label " : "", r->label ? r->label : "");
    if (len > 0 && (size_t)len < sizeof line)
        fputs(line, f);
    doc_result_free(r);
    load_text(f, doc, path);
}

int export_load_print_stored(FILE *out, const json_t *doc, const char *path)
{
    return export_text_compose(out, stored_text, doc, path);
}
