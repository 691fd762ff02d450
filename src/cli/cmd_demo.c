/* cmd_demo: `mlbench demo`, the worked example's six steps on real data (docs/workloads.md):
 * 1 the baseline, 2 its bottleneck, 3 loading and preprocessing optimised, 4 re-benchmarked
 * against the baseline, 5 training optimised (bf16 where the CPU has it, the batch found by
 * `mlbench sweep --find-max`, every core) under an accuracy guard, 6 the whole pipeline, baseline
 * against final, and how to keep watching. Each step is this same binary run as a child
 * (`mlbench run`, `sweep`, `compare`, `report`), its command line printed first, so the demo
 * shows what a user would type; the views between steps are export/demo_text.c's. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "doc/sweep.h"
#include "store/store.h"
#include "cli/demo_cmdline.h"
#include "cli/options.h"
#include "cli/workload_path.h"
#include "export/demo_text.h"
#include "result/envinfo.h"
#include "doc/result_file.h"
#include "util/clock.h"
#include "util/fsx.h"
#include "util/log.h"
#include "util/xalloc.h"

/* The prose of --help, above and below the options (the rows of parse). */
static const char usage[] =
    "Usage: mlbench demo [options]\n"
    "The worked example's six steps on the image-classification reference workload\n"
    "(Fashion-MNIST JPEG files -> small CNN): 1 the baseline (serial loading, batch 32, one\n"
    "thread, fp32), 2 its bottleneck, 3 loading and preprocessing on a loader thread with\n"
    "prefetch, 4 that against the baseline, 5 training in bf16 (where the CPU has it) with the\n"
    "batch `mlbench sweep --find-max` finds and every core, under an accuracy guard, 6 the whole\n"
    "pipeline before -> after, how to keep watching, and an HTML report of all steps.\n";
static const char tail[] =
    "Exit status: 0 the six steps ran (the accuracy guard's verdict is in the output); 2 bad\n"
    "options or no mlbench-workload; otherwise that of the step that failed.\n";

/* Mann-Whitney's smallest two-sided p with n runs a side is 2/C(2n, n): 0.1 with 3, 0.029
 * with 4, so 4 is the fewest that can show a significant change. */
#define DEMO_RUNS 4
#define GUARD_POINTS 0.5 /* accuracy step 5 may lose against step 3, in percentage points */

struct demo {
    char *self, *workload; /* as run and printed: relative to the working directory under it */
    const char *store, *data_dir, *dataset;
    int runs, train_images, epochs, cpus, loaders;
    double target;
    const char *memory_budget; /* the batch search's budget for the batch's buffers */
    bool quick, bf16;
    char *dir;                 /* STORE/demo */
};

/* A configuration of the workload: what the steps change. */
struct config {
    int batch;          /* 0: "{batch}", the search's parameter */
    int threads, loaders;
    bool bf16;
    const char *max_memory; /* --max-memory, or NULL */
};

/* Appends the workload's command for c. */
static void workload_words(const struct demo *d, const struct config *c, struct strvec *w)
{
    STRVEC_PUSHL(w, d->workload, "imgclf");
    if (d->quick)
        STRVEC_PUSHL(w, "--dataset", d->dataset, "--image-size", "16", "--val-images", "300");
    if (d->data_dir)
        STRVEC_PUSHL(w, "--data-dir", d->data_dir);
    demo_words_add_int(w, "--train-images", d->train_images);
    /* Trained for a fixed number of epochs, the time to the target reported on the way, not
     * with --until-accuracy: tried (2026-12-02), a run that stops at the target has whatever
     * accuracy its last evaluation happened to reach, so the accuracy guard compared stopping
     * points (it failed on 0.816 against 0.782 for no loss of quality), --max-epochs' longer
     * cosine schedule made the baseline need a third epoch, and the demo took 202 s. */
    demo_words_add_int(w, "--epochs", d->epochs);
    strvec_push(w, "--target-accuracy");
    strvec_pushf(w, "%.4g", d->target);
    strvec_push(w, "--batch");
    if (c->batch)
        strvec_pushf(w, "%d", c->batch);
    else
        strvec_push(w, "{batch}");
    demo_words_add_int(w, "--threads", c->threads);
    demo_words_add_int(w, "--loader-threads", c->loaders);
    if (c->loaders)
        STRVEC_PUSHL(w, "--prefetch", "4");
    if (c->bf16)
        STRVEC_PUSHL(w, "--precision", "bf16");
    if (c->max_memory)
        STRVEC_PUSHL(w, "--max-memory", c->max_memory);
}

/* The workload's command for c as one string, for `mlbench sweep -c`. */
static char *workload_line(const struct demo *d, const struct config *c)
{
    struct strvec w = STRVEC_INIT;
    workload_words(d, c, &w);
    char *line = demo_words_line(&w);
    strvec_free(&w);
    return line;
}

/* "mlbench VERB --store STORE" */
static void mlbench_words(const struct demo *d, struct strvec *w, const char *verb)
{
    STRVEC_PUSHL(w, d->self, verb, "--store", d->store);
}

static void header(int step, const char *title)
{
    printf("\n== step %d/6: %s ==\n", step, title);
}

/* Loads a document a step wrote (a result or a sweep), or NULL with the message printed. */
static json_t *load_doc(const char *path, bool result)
{
    char err[1024];
    json_t *doc;
    if (result) {
        doc = doc_result_load_file(path, err, sizeof err);
    } else {
        json_error_t e;
        doc = json_load_file(path, 0, &e);
        if (!doc)
            snprintf(err, sizeof err, "%s: line %d, column %d: %s", path, e.line, e.column, e.text);
    }
    if (!doc)
        log_error("cannot read what the step wrote: %s", err);
    return doc;
}

/* The result file of the point named name of the sweep document at path: STORE/<result_path>,
 * owned by the caller, or NULL with a message. */
static char *point_result(const struct demo *d, const char *sweep_path, const char *name)
{
    json_t *doc = load_doc(sweep_path, false);
    struct doc_sweep *s = doc_sweep_read(doc);
    char *path = NULL;
    for (size_t i = 0; i < s->n_points; i++) {
        const char *n = s->points[i].name, *rp = s->points[i].result_path;
        if (n && rp && !strcmp(n, name) && !strstr(rp, "..")) {
            free(path);
            path = xasprintf("%s/%s", d->store, rp);
        }
    }
    if (doc && !path)
        log_error("%s has no result of point '%s'", sweep_path, name);
    doc_sweep_free(s);
    json_decref(doc);
    return path;
}

/* Returns true when the demo goes on; false with the exit status in *status (after the help
 * or the message). */
static bool parse(int argc, char **argv, struct demo *d, int *status)
{
    const char *store_env = getenv("MLBENCH_STORE");
    d->store = store_env && *store_env ? store_env : ".mlbench";
    d->target = NAN;
    const struct cli_option table[] = {
        CLI_OPT_FLAG("quick", 0, &d->quick,
                     .help = "a small synthetic dataset: seconds (for tests)"),
        CLI_OPT_INTEGER("runs", 'r', &d->runs, 1, 100, 0, "must be a whole number from 1 to 100",
                        .metavar = "N",
                        .help = "runs of each configuration (default 4: fewer cannot show a "
                                "significant change)"),
        CLI_OPT_INTEGER("train-images", 0, &d->train_images, 1, 1000000, 0,
                        "must be a whole number from 1 to 1000000", .metavar = "N",
                        .help = "training images per run (default 6000 of the 60 000; --quick "
                                "2000 synthetic)"),
        CLI_OPT_INTEGER("epochs", 0, &d->epochs, 1, 100, 0, "must be a whole number from 1 to 100",
                        .metavar = "N", .help = "epochs per run (default 2)"),
        CLI_OPT_NUMBER("target-accuracy", 0, &d->target, 0, 1, CLI_OPEN_MIN | CLI_OPEN_MAX,
                       "must be an accuracy between 0 and 1 (exclusive), e.g. 0.85",
                       .metavar = "X",
                       .help = "the validation accuracy to train to (default 0.78; --quick "
                               "0.40)"),
        CLI_OPT_STRING("data-dir", 0, &d->data_dir, CLI_NONEMPTY, "is empty: give a directory",
                       .metavar = "DIR", .help = "where the dataset's JPEG files are kept"),
        /* a directory: the demo writes its files into it */
        CLI_OPT_STRING("store", 0, &d->store, CLI_NONEMPTY, "is empty: give a directory",
                       .metavar = "DIR",
                       .help = "result store (default .mlbench); the demo's files go to "
                               "DIR/demo/"),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "demo", .options = table, .flags = CLI_NO_ARGS,
                                      .usage = usage, .tail = tail};
    struct cli_args args;
    if (!cli_parse_args(&parser, argc, argv, &args, status))
        return false;
    if (!d->quick && d->train_images > 60000) {
        log_error("demo: --train-images '%d' is more than Fashion-MNIST's 60000 training "
                  "images: give at most 60000", d->train_images);
        *status = 2;
        return false;
    }
    d->dataset = d->quick ? "synthetic" : "fashion-mnist";
    if (!d->runs)
        d->runs = DEMO_RUNS;
    if (!d->train_images)
        d->train_images = d->quick ? 2000 : 6000;
    if (!d->epochs)
        d->epochs = 2;
    if (isnan(d->target))
        d->target = d->quick ? 0.40 : 0.78;
    /* What step 5's configuration needs (the workload's own count: model and optimiser state,
     * the batches in flight with prefetch, the evaluation batches) is about 17 MiB at batch 32
     * and 19.4 MiB at 256, 23 MiB at 512 on 28x28 images (7, 9.3 and 13 MiB at 16x16): these
     * budgets let 256 fit and not 512, so the search's answer lies inside its range and its
     * failing probe fails at once (the workload counts before it trains). */
    d->memory_budget = d->quick ? "11MiB" : "21MiB";
    return true;
}

/* The lines that say what the demo measures and why these sizes. */
static void intro(const struct demo *d)
{
    if (d->quick)
        printf("mlbench demo --quick: the worked example's six steps on a synthetic set of "
               "16x16 images (%d training, 300 validation),\n%d epoch(s), target accuracy "
               "%.4g: seconds, for tests; its accuracies prove nothing about real data.\n",
               d->train_images, d->epochs, d->target);
    else
        printf("mlbench demo: the worked example's six steps on Fashion-MNIST (real images as "
               "JPEG files): %d of the 60 000\ntraining images (an even subset), %d epoch(s), "
               "validated on the 10 000 test images after each epoch, target accuracy %.4g.\n",
               d->train_images, d->epochs, d->target);
    if (!d->quick && d->train_images == 6000 && d->epochs == 2 && d->target == 0.78)
        printf("why: the baseline reaches 0.78 in 2 epochs over 6000 images (about 4 s on 2 "
               "quiet cores), so all six steps fit in\n     3 minutes; 0.88 takes 2 epochs over "
               "all 60 000 (some 35 s a baseline run: the demo would take 10 minutes).\n");
    else if (!d->quick)
        printf("why: the sizes and target given (--train-images, --epochs, --target-accuracy); "
               "the defaults fit 3 minutes on 2 cores.\n");
    printf("runs: %d of each configuration, after one warm-up run that is not counted%s\n",
           d->runs,
           d->runs >= DEMO_RUNS ? ";\n      Mann-Whitney's smallest p is 0.029 with 4 runs a "
                                  "side, 0.1 with 3: 4 is the fewest that can show a "
                                  "significant change"
                                : ";\n      too few for any comparison to be significant (4 "
                                  "are)");
    printf("interleaved: step 3's runs alternate with fresh runs of step 1's configuration, and "
           "step 5's with fresh runs of\nstep 3's, in a shuffled order each round (mlbench sweep "
           "-c), so drift on this machine falls on both sides of\neach comparison alike; step 1 "
           "runs alone first, as a user's first benchmark would.\n");
}

/* The paths the steps write (under STORE/demo) and the results they read back. */
struct files {
    char *r1, *sweep3, *search, *sweep5, *html; /* written by the steps */
    char *r3, *r5; /* the results of step 3's and step 5's configurations in their sweeps */
};

/* Step 5's precision: bf16 when the CPU has AVX512_BF16 (as `mlbench env` reports it, with
 * MLBENCH_CPU_DISABLE), said either way. */
static bool choose_bf16(void)
{
    if (envinfo_cpu_has("avx512_bf16")) {
        printf("precision: bf16 (this CPU has AVX512_BF16: `mlbench env`, line precision): "
               "matrix products on bf16 operands,\n           fp32 sums, master weights and "
               "update\n");
        return true;
    }
    bool off = envinfo_cpu_disabled(getenv("MLBENCH_CPU_DISABLE"), "avx512_bf16");
    printf("this CPU has no AVX512_BF16%s: step 5 stays in fp32\n",
           off ? " (MLBENCH_CPU_DISABLE removes it)" : "");
    return false;
}

/* Step 5's batch: `mlbench sweep --find-max` under the memory budget, the fastest to the
 * target among the batches that keep step 3's accuracy within the guard. Returns the batch, or
 * -1 (the step failed, said). */
static int search_batch(const struct demo *d, const struct files *f, double acc3)
{
    const int keep = 32; /* step 3's */
    printf("batch: the largest that fits a budget of %s for the batch's buffers (the workload's "
           "--max-memory counts\n       them exactly, where the sweep's --memory-budget would "
           "judge a sampled peak of the whole process),\n       then among those the fastest to "
           "%.4g whose accuracy stays within %.1f points of step 3's; one run a probe\n",
           d->memory_budget, d->target, GUARD_POINTS);
    struct strvec w = STRVEC_INIT;
    mlbench_words(d, &w, "sweep");
    STRVEC_PUSHL(&w, "-r", "1", "-l", "demo-batch-search", "-o", f->search, "--find-max",
             "batch=32..1024", "--pow2", "--objective", "min:counter:time_to_target_s");
    if (isfinite(acc3))
        /* a hair under the guard's bound, so that float rounding cannot exclude a batch the
         * guard would pass */
        strvec_pushf(&w, "--constraint=counter:accuracy>=%.6f",
                        acc3 - GUARD_POINTS / 100 - 1e-9);
    strvec_push(&w, "--");
    struct config c = {0, d->cpus, d->loaders, d->bf16, d->memory_budget};
    workload_words(d, &c, &w);
    unlink(f->search); /* never read a previous demo's answer */
    int rc = demo_run(&w);
    strvec_free(&w);
    /* An objective counter missing from the first probe stops the sweep (exit 2) with what ran
     * written: no batch reached the target, the answer that keeps step 3's batch. */
    json_t *doc = access(f->search, F_OK) == 0 ? load_doc(f->search, false) : NULL;
    if (!doc) {
        log_error("the batch search stopped (exit status %d) and wrote no sweep document", rc);
        return -1;
    }
    int batch = export_demo_chosen_batch(doc, keep);
    export_demo_print_batch_choice(stdout, doc, keep);
    json_decref(doc);
    return batch;
}

/* Step 3 or 5's measurement: `mlbench sweep -c A -c B`, the two configurations interleaved,
 * its document written to path; *result_b gets the result file of B (and *result_a of A when
 * result_a is not NULL). Returns the sweep's exit status, or 1 when a result is missing (said). */
static int interleaved(const struct demo *d, const char *path, const struct config *a,
                       const char *name_a, const struct config *b, const char *name_b,
                       char **result_a, char **result_b)
{
    struct strvec w = STRVEC_INIT;
    char *line_a = workload_line(d, a), *line_b = workload_line(d, b);
    mlbench_words(d, &w, "sweep");
    demo_words_add_int(&w, "-r", d->runs);
    STRVEC_PUSHL(&w, "-w", "1");
    STRVEC_PUSHL(&w, "-o", path, "-c", line_a, "-n", name_a, "-c", line_b, "-n", name_b);
    free(line_a);
    free(line_b);
    int rc = demo_run(&w);
    strvec_free(&w);
    if (rc == 0 && (result_a && !(*result_a = point_result(d, path, name_a))))
        rc = 1;
    if (rc == 0 && !(*result_b = point_result(d, path, name_b)))
        rc = 1;
    return rc;
}

/* `mlbench compare [--max-accuracy-drop P] SWEEP`: the second point against the first. */
static int compare_sweep(const struct demo *d, const char *path, bool guard)
{
    struct strvec w = STRVEC_INIT;
    mlbench_words(d, &w, "compare");
    if (guard)
        strvec_pushf(&w, "--max-accuracy-drop=%.2g", GUARD_POINTS);
    strvec_push(&w, path);
    int rc = demo_run(&w);
    strvec_free(&w);
    return rc;
}

/* Step 6 after its table: how to keep watching the final configuration, then the report of all
 * steps. Returns the report's exit status. */
static int keep_watching(const struct demo *d, const struct files *f, const struct config *final)
{
    char *final_line = workload_line(d, final);
    printf("\nkeep watching it:\n"
           "  %s monitor -- %s\n"
           "      serves its stages, counters and resources as Prometheus /metrics at "
           "127.0.0.1:9464 while it trains\n"
           "  %s run --serve :9464 ...   the same endpoint during a benchmark\n"
           "  %s history --detect --store %s\n"
           "      step changes per label (demo-baseline, demo-final, ...) across the stored "
           "results; exit 1 when the newest is slower\n\n",
           d->self, final_line, d->self, d->self, d->store);
    free(final_line);
    printf("the report of all steps (steps 3 and 5 against step 1):\n");
    struct strvec w = STRVEC_INIT;
    mlbench_words(d, &w, "report");
    STRVEC_PUSHL(&w, "-o", f->html, f->r1, f->r3, f->r5);
    int rc = demo_run(&w);
    strvec_free(&w);
    return rc;
}

/* Runs the six steps; returns the demo's exit status. */
static int six_steps(struct demo *d, struct files *f)
{
    int rc;
    json_t *r1 = NULL, *r3 = NULL, *r3_again = NULL, *r5 = NULL;
    struct config base = {32, 1, 0, false, NULL}, loaders = {32, 1, d->loaders, false, NULL};
    struct strvec w = STRVEC_INIT;
    const char *failed = NULL;

    char title[256];
    snprintf(title, sizeof title, "baseline: serial loading in the training thread, batch 32, "
             "one thread, fp32, trained to %.4g", d->target);
    header(1, title);
    mlbench_words(d, &w, "run");
    demo_words_add_int(&w, "-r", d->runs);
    STRVEC_PUSHL(&w, "-w", "1");
    STRVEC_PUSHL(&w, "-l", "demo-baseline", "-o", f->r1, "--");
    workload_words(d, &base, &w);
    rc = demo_run(&w);
    strvec_free(&w);
    if (rc != 0 || !(r1 = load_doc(f->r1, true))) {
        failed = "step 1";
        goto out;
    }

    header(2, "bottleneck: the analysis of step 1");
    export_demo_print_bottleneck(stdout, r1);

    snprintf(title, sizeof title, "optimise loading and preprocessing: %d loader thread%s, 4 "
             "batches prefetched", d->loaders, d->loaders == 1 ? "" : "s");
    header(3, title);
    printf("changed: --loader-threads 0 -> %d --prefetch 4 (the seed's parallel data loading); "
           "batch, threads and precision as in step 1;\nmeasured interleaved with step 1's "
           "configuration, round by round:\n", d->loaders);
    rc = interleaved(d, f->sweep3, &base, "demo-baseline", &loaders, "demo-loaders", NULL, &f->r3);
    if (rc != 0 || !(r3 = load_doc(f->r3, true))) {
        failed = "step 3";
        goto out;
    }

    header(4, "re-benchmark: step 3 against step 1 (its interleaved runs), stage by stage, with "
              "significance");
    if ((rc = compare_sweep(d, f->sweep3, false)) != 0) {
        failed = "step 4";
        goto out;
    }

    snprintf(title, sizeof title, "optimise training: precision, the batch found by "
             "measurement, %d thread%s", d->cpus, d->cpus == 1 ? "" : "s");
    header(5, title);
    d->bf16 = choose_bf16();
    int batch = search_batch(d, f, export_demo_counter(r3, "accuracy"));
    if (batch < 0) {
        rc = 1;
        failed = "the batch search";
        goto out;
    }
    struct config final = {batch, d->cpus, d->loaders, d->bf16, NULL};
    printf("\nthe final configuration: %s, batch %d, %d thread%s, loading as in step 3; measured "
           "interleaved with step 3's:\n", d->bf16 ? "bf16" : "fp32", batch, d->cpus,
           d->cpus == 1 ? "" : "s");
    char *again_path = NULL;
    rc = interleaved(d, f->sweep5, &loaders, "demo-loaders", &final, "demo-final", &again_path,
                     &f->r5);
    if (rc == 0)
        r3_again = load_doc(again_path, true);
    free(again_path);
    if (rc != 0 || !r3_again || !(r5 = load_doc(f->r5, true))) {
        failed = "step 5";
        goto out;
    }
    printf("\nstep 5 against step 3, with the accuracy guard:\n");
    rc = compare_sweep(d, f->sweep5, true);
    if (rc != 0 && rc != 1) { /* 1: the guard failed, a verdict */
        failed = "step 5's comparison";
        goto out;
    }
    bool passed = rc == 0;
    if (passed)
        printf("accuracy guard: passed (no more than %.2g points lost)\n", GUARD_POINTS);
    else
        printf("accuracy guard: FAILED: step 5 lost more than %.2g points of accuracy (above)\n",
               GUARD_POINTS);

    header(6, "final: the whole pipeline, baseline (step 1) -> final (step 5)");
    /* the guard's baseline: step 3's configuration as step 5's sweep measured it; a missing
     * accuracy stays missing, never 0 */
    const struct export_demo_final table = {r1, r5, d->target, GUARD_POINTS,
                                            export_demo_counter(r3_again, "accuracy"), passed};
    export_demo_print_final(stdout, &table);
    if ((rc = keep_watching(d, f, &final)) != 0) {
        failed = "the report";
        goto out;
    }
    printf("\nwritten: %s (step 1), %s (steps 1 and 3), %s (the batch search), %s (steps 3 "
           "and 5), %s;\nevery result is also in the store %s (mlbench history, mlbench show)\n",
           f->r1, f->sweep3, f->search, f->sweep5, f->html, d->store);
out:
    if (failed) {
        rc = rc <= 0 ? 1 : rc;
        log_error("the demo stopped: %s failed (exit status %d)", failed, rc);
    }
    json_decref(r1);
    json_decref(r3);
    json_decref(r3_again);
    json_decref(r5);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    struct demo d = {0};
    int rc;
    if (!parse(argc, argv, &d, &rc))
        return rc;
    d.workload = demo_near_path(workload_path());
    if (!d.workload) {
        log_error("cannot find mlbench-workload beside mlbench or on PATH: build it (make "
                  "build) or install it");
        return 2;
    }
    d.self = demo_near_path(realpath("/proc/self/exe", NULL));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    d.cpus = cpus < 1 ? 1 : cpus > 1024 ? 1024 : (int)cpus;
    /* one loader thread keeps up with training on a few cores (a 28x28 JPEG decodes in ~5 us);
     * a quarter of the cores on bigger machines */
    d.loaders = d.cpus >= 8 ? d.cpus / 4 : 1;
    if (store_where(d.store, NULL, NULL, 0) != 0) {
        log_error("mlbench demo keeps its files in a directory store: give --store DIR");
        return 2;
    }
    d.dir = xasprintf("%s/demo", d.store);
    struct files f = {
        .r1 = xasprintf("%s/1-baseline.json", d.dir),
        .sweep3 = xasprintf("%s/3-loaders-sweep.json", d.dir),
        .search = xasprintf("%s/5-batch-search.json", d.dir),
        .sweep5 = xasprintf("%s/5-final-sweep.json", d.dir),
        .html = xasprintf("%s/demo.html", d.dir),
    };
    if (!d.self || fsx_mkdirs(d.dir) != 0) {
        log_error("cannot create '%s': %s (choose another with --store DIR)", d.dir,
                  strerror(errno));
        rc = 2;
        goto out;
    }
    int64_t t0 = mono_ns();
    intro(&d);
    printf("\n== the dataset (prepared once, not measured) ==\n");
    struct strvec w = STRVEC_INIT;
    STRVEC_PUSHL(&w, d.workload, "imgclf");
    if (d.quick)
        STRVEC_PUSHL(&w, "--dataset", d.dataset, "--image-size", "16", "--val-images", "300");
    if (d.data_dir)
        STRVEC_PUSHL(&w, "--data-dir", d.data_dir);
    demo_words_add_int(&w, "--train-images", d.train_images);
    strvec_push(&w, "--prepare-only");
    rc = demo_run(&w);
    strvec_free(&w);
    if (rc != 0) {
        log_error("the demo stopped: preparing the dataset failed (exit status %d)", rc);
        rc = rc < 0 ? 1 : rc;
        goto out;
    }
    rc = six_steps(&d, &f);
    if (rc == 0)
        printf("the demo took %.0f s\n", (double)(mono_ns() - t0) / 1e9);
out:
    free(d.self);
    free(d.workload);
    free(d.dir);
    free(f.r1);
    free(f.sweep3);
    free(f.search);
    free(f.sweep5);
    free(f.html);
    free(f.r3);
    free(f.r5);
    return rc;
}
