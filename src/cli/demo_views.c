/* demo_views.c: the views of `mlbench demo` between its steps (demo_views.h), from the result
 * and sweep documents its steps wrote. They read the documents tolerantly (util/jsonx.h): a
 * missing figure prints as "-", never as 0. */
#include "cli/demo_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/text.h"
#include "util/jsonx.h"
#include "util/units.h"

/* The element of array whose member key is the string value, or NULL. */
static const json_t *find_named(const json_t *array, const char *key, const char *value)
{
    size_t i;
    const json_t *e;
    json_array_foreach(array, i, e) {
        const char *s = jsonx_str(e, key);
        if (s && value && !strcmp(s, value))
            return e;
    }
    return NULL;
}

double demo_counter(const json_t *r, const char *name)
{
    const json_t *c = find_named(json_object_get(json_object_get(r, "summary"), "counters"),
                                 "name", name);
    return jsonx_num(json_object_get(c, "last"), "median");
}

static const json_t *stage_of(const json_t *r, const char *name)
{
    return find_named(json_object_get(json_object_get(r, "summary"), "stages"), "name", name);
}

/* The median wall time of stage name in r (total: the run's), in ns, or NAN. */
static double stage_median_ns(const json_t *r, const char *name)
{
    if (!strcmp(name, "total"))
        return jsonx_num(json_object_get(json_object_get(r, "summary"), "wall_ns"), "median");
    return jsonx_num(json_object_get(stage_of(r, name), "active_ns"), "median");
}

static double stage_share(const json_t *r, const char *name)
{
    return jsonx_num(stage_of(r, name), "share");
}

/* ---- step 2 --------------------------------------------------------------------------- */

static void bottleneck_text(FILE *out, const json_t *r, const char *unused)
{
    (void)unused;
    const json_t *analysis = json_object_get(r, "analysis");
    const char *stage = jsonx_str(analysis, "bottleneck");
    if (!stage) {
        fputs("the analysis named no bottleneck (no stage took most of the time)\n", out);
    } else {
        const json_t *v = find_named(json_object_get(analysis, "verdicts"), "stage", stage);
        double share = stage_share(r, stage);
        fprintf(out, "bottleneck: %s", stage);
        if (isfinite(share))
            fprintf(out, ", %.1f %% of a run", 100 * share);
        fprintf(out, ": %s\n", jsonx_str(v, "rule") ? jsonx_str(v, "rule") : "no verdict");
        if (jsonx_str(v, "evidence"))
            fprintf(out, "  evidence: %s\n", jsonx_str(v, "evidence"));
    }
    const json_t *findings = json_object_get(analysis, "findings"), *f;
    size_t i;
    if (json_array_size(findings))
        fputs("what to try (the analysis's findings, the largest saving first):\n", out);
    json_array_foreach(findings, i, f) {
        if (i == 3) {
            fprintf(out, "  (%zu more in step 1's output)\n", json_array_size(findings) - 3);
            break;
        }
        fprintf(out, "  %zu. %s [%s]: %s", i + 1,
                jsonx_str(f, "stage") ? jsonx_str(f, "stage") : "?",
                jsonx_str(f, "rule") ? jsonx_str(f, "rule") : "?",
                jsonx_str(f, "recommendation") ? jsonx_str(f, "recommendation") : "-");
        char d[32];
        if (jsonx_num(f, "saving_ns") > 0)
            fprintf(out, " (could save about %s a run)",
                    units_duration(jsonx_num(f, "saving_ns"), d, sizeof d));
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

int demo_print_bottleneck(FILE *out, const json_t *r)
{
    return export_text_compose(out, bottleneck_text, r, NULL);
}

/* ---- step 5 --------------------------------------------------------------------------- */

static const json_t *winner_point(const json_t *sweep)
{
    const json_t *w = json_object_get(sweep, "winner");
    long long index = jsonx_count(w, "index", 1000000, -1);
    return index < 0 ? NULL : json_array_get(json_object_get(sweep, "points"), (size_t)index);
}

int demo_chosen_batch(const json_t *sweep, int fallback)
{
    const char *v = jsonx_str(json_object_get(winner_point(sweep), "parameters"), "batch");
    long batch;
    return v && units_parse_long(v, 1, 1 << 24, &batch) == 0 ? (int)batch : fallback;
}

static void batch_text(FILE *out, const json_t *doc, const char *unused)
{
    (void)unused;
    const json_t *sweep = json_object_get(doc, "sweep");
    const json_t *fm = json_object_get(sweep, "find_max");
    int fallback = (int)jsonx_int(doc, "fallback", 32);
    long long fit = jsonx_int(fm, "largest_fit", -1), fail = jsonx_int(fm, "first_failure", -1);
    if (fit > 0)
        fprintf(out, "largest batch that fits the budget: %lld", fit);
    else
        fputs("no batch fitted the budget", out);
    if (fail > 0)
        fprintf(out, " (%lld does not)", fail);
    fputs("\n", out);
    const json_t *w = json_object_get(sweep, "winner");
    if (winner_point(sweep)) {
        int batch = demo_chosen_batch(sweep, fallback);
        fprintf(out, "chosen: batch %d, %s%s\n", batch,
                jsonx_str(w, "reason") ? jsonx_str(w, "reason") : "the search's winner",
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

int demo_print_batch_choice(FILE *out, const json_t *sweep, int fallback)
{
    json_t *doc = json_pack("{s:O, s:i}", "sweep", sweep ? sweep : json_null(), "fallback",
                            fallback);
    int rc = export_text_compose(out, batch_text, doc, NULL);
    json_decref(doc);
    return rc;
}

/* ---- step 6 --------------------------------------------------------------------------- */

static void cell_duration(FILE *out, double ns)
{
    char d[32];
    fprintf(out, "  %10s", isfinite(ns) ? units_duration(ns, d, sizeof d) : "-");
}

static void cell_accuracy(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "  %10.4f", v);
    else
        fprintf(out, "  %10s", "-");
}

static void cell_change(FILE *out, double before, double after)
{
    if (isfinite(before) && isfinite(after) && before > 0)
        fprintf(out, "  %+8.1f %%", 100 * (after / before - 1));
    else
        fprintf(out, "  %10s", "-");
}

static void final_text(FILE *out, const json_t *doc, const char *unused)
{
    (void)unused;
    const json_t *before = json_object_get(doc, "before"), *after = json_object_get(doc, "after");
    static const char *const stages[] = {"load", "preprocess", "train", "evaluate", "total"};
    fprintf(out, "  %-20s  %10s  %10s  %10s\n", "stage", "before", "after", "change");
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        double b = stage_median_ns(before, stages[i]), a = stage_median_ns(after, stages[i]);
        fprintf(out, "  %-20s", stages[i]);
        cell_duration(out, b);
        cell_duration(out, a);
        cell_change(out, b, a);
        putc('\n', out);
    }
    char label[64];
    snprintf(label, sizeof label, "time to %.4g", jsonx_num(doc, "target"));
    double b = demo_counter(before, "time_to_target_s") * 1e9;
    double a = demo_counter(after, "time_to_target_s") * 1e9;
    fprintf(out, "  %-20s", label);
    if (isfinite(b))
        cell_duration(out, b);
    else
        fprintf(out, "  %10s", "not reached");
    if (isfinite(a))
        cell_duration(out, a);
    else
        fprintf(out, "  %10s", "not reached");
    cell_change(out, b, a);
    putc('\n', out);
    b = demo_counter(before, "accuracy");
    a = demo_counter(after, "accuracy");
    fprintf(out, "  %-20s", "accuracy");
    cell_accuracy(out, b);
    cell_accuracy(out, a);
    if (isfinite(a) && isfinite(b))
        fprintf(out, "  %+6.2f points", 100 * (a - b));
    putc('\n', out);
    fputs("(medians of each configuration's runs; time to the target includes the evaluations "
          "before it)\n", out);
    /* After step 3 load and preprocess run on the loader thread while train runs: their own
     * times can grow as they share the cores, yet they cost only what they add to the total. */
    if (jsonx_num(stage_of(after, "load"), "overlap_ns_median") > 0)
        fputs("load and preprocess now overlap train on the loader thread: their times are "
              "wall time with the stage open,\nand they cost only what they add to the total.\n",
              out);

    const json_t *g = json_object_get(doc, "guard");
    double drop = jsonx_num(g, "max_drop"), base = jsonx_num(g, "baseline");
    fprintf(out, "accuracy guard (step 5 against step 3, mlbench compare --max-accuracy-drop "
            "%.2g): ", drop);
    if (!json_is_boolean(json_object_get(g, "passed")))
        fputs("not checked\n", out);
    else
        fprintf(out, "%s: %.4f -> %.4f (%+.2f points; at most %.2g may be lost)\n",
                json_is_true(json_object_get(g, "passed")) ? "passed" : "FAILED", base, a,
                100 * (a - base), drop);
}

int demo_print_final(FILE *out, const json_t *doc)
{
    return export_text_compose(out, final_text, doc, NULL);
}
