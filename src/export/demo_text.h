/* demo_text: what `mlbench demo` (cli/cmd_demo.c) prints between its steps, read from the
 * documents its steps wrote: the bottleneck of the baseline (step 2), the batch the search
 * chose (step 5) and the final table, baseline against final (step 6). Results are read through
 * doc/result.h; each view is composed in memory and written through term_clean, so no string of
 * a document (stage names, evidence) reaches the terminal as a control character. Not
 * thread-safe (one view at a time). */
#ifndef MLBENCH_EXPORT_DEMO_TEXT_H
#define MLBENCH_EXPORT_DEMO_TEXT_H

#include <stdio.h>

#include <jansson.h>

/* The median over the runs of result r of the last value of counter name, or NAN when r has no
 * such counter. */
double export_demo_counter(const json_t *r, const char *name);

/* Step 2: the analysis of the baseline result r: its bottleneck stage with its share, verdict
 * and evidence, the first findings with what to try, and how much of a run loading and
 * preprocessing take in the training thread. Returns 0, or -1 when out cannot be written. */
int export_demo_print_bottleneck(FILE *out, const json_t *r);

/* Step 5: the batch a find-max sweep document (mlbench.sweep/1) chose: its winner's value of
 * parameter `batch`, or fallback when it has none (no point qualified). Pure. */
int export_demo_chosen_batch(const json_t *sweep, int fallback);

/* Step 5: what the search found: the largest batch that fits, the batch chosen (that of
 * export_demo_chosen_batch) and why, or that no larger batch qualified and fallback is kept.
 * Returns 0, or -1 when out cannot be written. */
int export_demo_print_batch_choice(FILE *out, const json_t *sweep, int fallback);

/* Step 6: what the final table compares. */
struct export_demo_final {
    const json_t *before, *after; /* the results of the baseline and the final configuration */
    double target;                /* the accuracy trained to */
    double max_drop;              /* the guard: accuracy points the final may lose */
    double baseline;              /* the accuracy it is held to; NAN when unknown */
    int passed;                   /* the guard's verdict: 1, 0, or -1 when not checked */
};

/* Step 6: the example's table of f: load, preprocess, train, evaluate and total (medians), the
 * time to the target accuracy and the accuracy, before -> after with the change in percent,
 * then the guard's verdict. Returns 0, or -1 when out cannot be written. */
int export_demo_print_final(FILE *out, const struct export_demo_final *f);

#endif
