/* demo_text.c: the views of `mlbench demo` between its steps (demo_text.h), from the result
 * documents its steps wrote (read through doc/result.h) and the sweep document of its batch
 * search. A missing figure prints as "-", never as 0. */
#include "export/demo_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc/result.h"
#include "doc/sweep.h"
#include "export/table.h"
#include "export/text.h"
#include "util/jsonx.h"
#include "util/units.h"

double export_demo_counter(const json_t *r, const char *name)
{
    struct doc_result *d = doc_result_read(r);
    const struct doc_counter *c = doc_result_counter(d, name);
    double v = c ? c->last.median : NAN;
    doc_result_free(d);
    return v;
}

/* The share of a run of the stage named name, or NAN. */
static double stage_share(const struct doc_result *r, const char *name)
{
    const struct doc_stage *st = doc_result_stage(r, name);
    return st ? st->share : NAN;
}

/* The median wall time of stage name in r ("total": the run's), in ns, or NAN. */
static double stage_median_ns(const struct doc_result *r, const char *name)
{
    if (!strcmp(name, "total"))
        return r->summary.wall.median;
    const struct doc_stage *st = doc_result_stage(r, name);
    return st ? st->active.median : NAN;
}

/* ---- step 2 --------------------------------------------------------------------------- */

/* The first verdict about stage, or NULL. */
static const struct doc_verdict *verdict_of(const struct doc_analysis *a, const char *stage)
{
    for (size_t i = 0; i < a->n_verdicts; i++)
        if (a->verdicts[i].stage && !strcmp(a->verdicts[i].stage, stage))
            return &a->verdicts[i];
    return NULL;
}

static void bottleneck_text(FILE *out, const void *arg)
{
    const struct doc_result *r = arg;
    const struct doc_analysis *a = &r->analysis;
    const char *stage = a->bottleneck;
    if (!stage) {
        fputs("the analysis named no bottleneck (no stage took most of the time)\n", out);
    } else {
        const struct doc_verdict *v = verdict_of(a, stage);
        double share = stage_share(r, stage);
        fprintf(out, "bottleneck: %s", stage);
        if (isfinite(share))
            fprintf(out, ", %.1f %% of a run", 100 * share);
        fprintf(out, ": %s\n", v && v->rule ? v->rule : "no verdict");
        if (v && v->evidence)
            fprintf(out, "  evidence: %s\n", v->evidence);
    }
    if (a->n_findings)
        fputs("what to try (the analysis's findings, the largest saving first):\n", out);
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct doc_finding *f = &a->findings[i];
        if (i == 3) {
            fprintf(out, "  (%zu more in step 1's output)\n", a->n_findings - 3);
            break;
        }
        fprintf(out, "  %zu. %s [%s]: %s", i + 1, f->stage ? f->stage : "?",
                f->rule ? f->rule : "?", f->recommendation ? f->recommendation : "-");
        char d[32];
        if (f->saving_ns > 0)
            fprintf(out, " (could save about %s a run)", units_duration(f->saving_ns, d, sizeof d));
        putc('\n', out);
    }
    double input = stage_share(r, "load") + stage_share(r, "preprocess");
    if (isfinite(input))
        fprintf(out, "load + preprocess: %.1f %% of a run, in the training thread: while a batch "
                "is read and decoded, training waits.\n", 100 * input);
    fputs("The example fixes the input pipeline first (step 3: a loader thread that prepares "
          "batches ahead),\nthen training itself (step 5: precision, batch size, threads), "
          "measuring after each change.\n", out);
}

int export_demo_print_bottleneck(FILE *out, const json_t *r)
{
    struct doc_result *d = doc_result_read(r);
    int rc = export_text_draw(out, bottleneck_text, d);
    doc_result_free(d);
    return rc;
}

/* ---- step 5 --------------------------------------------------------------------------- */

/* The sweep's winner, or NULL when no point qualified. */
static const struct doc_sweep_point *winner_point(const struct doc_sweep *s)
{
    long long index = s->winner.index;
    return s->winner.present && index >= 0 && (size_t)index < s->n_points ? &s->points[index]
                                                                           : NULL;
}

static int chosen_batch(const struct doc_sweep *s, int fallback)
{
    const struct doc_sweep_point *p = winner_point(s);
    const char *v = p ? json_string_value(doc_sweep_parameter(p, "batch")) : NULL;
    long batch;
    return v && units_parse_long(v, 1, 1 << 24, &batch) == 0 ? (int)batch : fallback;
}

int export_demo_chosen_batch(const json_t *sweep, int fallback)
{
    struct doc_sweep *s = doc_sweep_read(sweep);
    int batch = chosen_batch(s, fallback);
    doc_sweep_free(s);
    return batch;
}

struct batch_choice {
    const struct doc_sweep *sweep;
    int fallback;
};

/* A value of the find-max answer as a whole number, -1 when absent. */
static long long whole(double v)
{
    return isfinite(v) && v >= -9.2e18 && v <= 9.2e18 ? llround(v) : -1;
}

static void batch_text(FILE *out, const void *arg)
{
    const struct batch_choice *c = arg;
    const struct doc_sweep *sweep = c->sweep;
    int fallback = c->fallback;
    long long fit = whole(sweep->find_max.largest_fit), fail = whole(sweep->find_max.first_failure);
    if (fit > 0)
        fprintf(out, "largest batch that fits the budget: %lld", fit);
    else
        fputs("no batch fitted the budget", out);
    if (fail > 0)
        fprintf(out, " (%lld does not)", fail);
    fputs("\n", out);
    if (winner_point(sweep)) {
        int batch = chosen_batch(sweep, fallback);
        fprintf(out, "chosen: batch %d, %s%s\n", batch,
                sweep->winner.reason ? sweep->winner.reason : "the search's winner",
                fit > 0 && batch != fit ? ": the largest batch is not the fastest to the target"
                                        : "");
    } else if (fit > 0) {
        fprintf(out, "chosen: batch %d: none of the batches that fit reached the target while "
                "keeping the accuracy (the sweep's\nconstraints above), so step 5 keeps step 3's "
                "batch\n", fallback);
    } else {
        fprintf(out, "chosen: batch %d: none fits the budget, so step 5 keeps step 3's batch\n",
                fallback);
    }
}

int export_demo_print_batch_choice(FILE *out, const json_t *sweep, int fallback)
{
    struct doc_sweep *s = doc_sweep_read(sweep);
    const struct batch_choice c = {s, fallback};
    int rc = export_text_draw(out, batch_text, &c);
    doc_sweep_free(s);
    return rc;
}

/* ---- step 6 --------------------------------------------------------------------------- */

/* The cells of row of a duration before and after: their medians and the change in percent
 * ("-" for what is unknown, `missing` for a duration that is not there). */
static void duration_cells(struct export_table *t, size_t row, double before, double after,
                           const char *missing)
{
    char d[32];
    export_table_set(t, row, 1, "%s", isfinite(before) ? units_duration(before, d, sizeof d)
                                                       : missing);
    export_table_set(t, row, 2, "%s", isfinite(after) ? units_duration(after, d, sizeof d)
                                                      : missing);
    if (isfinite(before) && isfinite(after) && before > 0)
        export_table_set(t, row, 3, "%+.1f %%", 100 * (after / before - 1));
    else
        export_table_set(t, row, 3, "-");
}

static void final_text(FILE *out, const void *arg)
{
    const struct export_demo_final *f = arg;
    struct doc_result *before = doc_result_read(f->before), *after = doc_result_read(f->after);
    static const char *const stages[] = {"load", "preprocess", "train", "evaluate", "total"};
    struct export_table t;
    export_table_init(&t, 4, "stage", "before", "after", "change");
    t.numeric = 1u << 1 | 1u << 2 | 1u << 3;
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", stages[i]);
        duration_cells(&t, row, stage_median_ns(before, stages[i]),
                       stage_median_ns(after, stages[i]), "-");
    }
    size_t row = export_table_row(&t, 0);
    export_table_set(&t, row, 0, "time to %.4g", f->target);
    const struct doc_counter *cb = doc_result_counter(before, "time_to_target_s");
    const struct doc_counter *ca = doc_result_counter(after, "time_to_target_s");
    duration_cells(&t, row, cb ? cb->last.median * 1e9 : NAN, ca ? ca->last.median * 1e9 : NAN,
                   "not reached");
    cb = doc_result_counter(before, "accuracy");
    ca = doc_result_counter(after, "accuracy");
    double b = cb ? cb->last.median : NAN, a = ca ? ca->last.median : NAN;
    row = export_table_row(&t, 0);
    export_table_set(&t, row, 0, "accuracy");
    char cb_text[32] = "-", ca_text[32] = "-";
    if (isfinite(b))
        snprintf(cb_text, sizeof cb_text, "%.4f", b);
    if (isfinite(a))
        snprintf(ca_text, sizeof ca_text, "%.4f", a);
    export_table_set(&t, row, 1, "%s", cb_text);
    export_table_set(&t, row, 2, "%s", ca_text);
    if (isfinite(a) && isfinite(b))
        export_table_set(&t, row, 3, "%+6.2f points", 100 * (a - b));
    const struct export_text_column col[4] = {
        {.width = 20, .sep = "  "}, {.width = 10}, {.width = 10}, {.width = 10},
    };
    const struct export_text_layout layout = {.col = col, .header = true, .trim = true};
    export_table_print(out, &t, &layout);
    export_table_free(&t);
    fputs("(medians of each configuration's runs; time to the target includes the evaluations "
          "before it)\n", out);
    /* After step 3 load and preprocess run on the loader thread while train runs: their own
     * times can grow as they share the cores, yet they cost only what they add to the total. */
    const struct doc_stage *load = doc_result_stage(after, "load");
    if (load && load->overlap_ns_median > 0)
        fputs("load and preprocess now overlap train on the loader thread: their times are "
              "wall time with the stage open,\nand they cost only what they add to the total.\n",
              out);

    fprintf(out, "accuracy guard (step 5 against step 3, mlbench compare --max-accuracy-drop "
            "%.2g): ", f->max_drop);
    if (f->passed < 0)
        fputs("not checked\n", out);
    else
        fprintf(out, "%s: %.4f -> %.4f (%+.2f points; at most %.2g may be lost)\n",
                f->passed ? "passed" : "FAILED", f->baseline, a, 100 * (a - f->baseline),
                f->max_drop);
    doc_result_free(before);
    doc_result_free(after);
}

int export_demo_print_final(FILE *out, const struct export_demo_final *f)
{
    return export_text_draw(out, final_text, f);
}
