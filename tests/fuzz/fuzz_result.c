/* fuzz_result: the result file loader and everything that reads a loaded result. Input: a
 * result file (JSON). It is loaded (doc_result_load_file) and, when it loads, given to each
 * consumer the commands have: the terminal summary of `show` (export_text_print), the store's
 * indexing and `history` (store_record, then the store's history read, its series and changes
 * found, and every view of it: text, JSON and the dashboards), `compare` against a fixed
 * baseline and against itself (compare_results, its terminal view export_compare_print and
 * its gates), and every report format (export_at) for the result alone and with the baseline,
 * CSV with each of its tables. Output goes to /dev/null. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/compare.h"
#include "analysis/detect.h"
#include "analysis/history.h"
#include "export/compare_text.h"
#include "export/export.h"
#include "export/history.h"
#include "export/text.h"
#include "fuzz_util.h"
#include "doc/result_file.h"
#include "store/history.h"
#include "store/store.h"
#include "util/log.h"

/* A small result of the schema: one run with one stage, its summary. */
static const char baseline_json[] =
    "{\"schema\":\"mlbench.result/1\",\"id\":\"20260101T000000-base00\",\"label\":\"fz\","
    "\"created\":\"2026-01-01T00:00:00Z\",\"command\":[\"sleep\",\"0.01\"],\"status\":\"complete\","
    "\"environment\":{\"hostname\":\"vm\",\"cpus_online\":2},"
    "\"runs\":[{\"index\":0,\"warmup\":false,\"status\":\"ok\",\"wall_ns\":11000000,"
    "\"stages\":[{\"name\":\"load\",\"depth\":0,\"count\":1,\"active_ns\":5000000,"
    "\"busy_ns\":5000000}],\"counters\":[{\"name\":\"accuracy\",\"last\":0.9,\"n\":1}]},"
    "{\"index\":1,\"warmup\":false,\"status\":\"ok\",\"wall_ns\":12000000,"
    "\"stages\":[{\"name\":\"load\",\"depth\":0,\"count\":1,\"active_ns\":6000000,"
    "\"busy_ns\":6000000}]}],"
    "\"summary\":{\"runs_measured\":2,\"runs_ok\":2,\"wall_ns\":{\"n\":2,\"median\":11500000},"
    "\"stages\":[{\"name\":\"load\",\"depth\":0,\"active_ns\":{\"n\":2,\"median\":5500000}}]}}";

static json_t *baseline;
static char store_dir[256], base_path[300], cand_path[300];
static FILE *devnull;

static void setup(void)
{
    log_set_quiet(1);
    devnull = fopen("/dev/null", "w");
    /* the views print to stdout */
    if (!devnull || !freopen("/dev/null", "w", stdout))
        abort();
    snprintf(store_dir, sizeof store_dir, "%s/store", fuzz_tmpdir());
    char runs[300];
    snprintf(runs, sizeof runs, "%s/runs", store_dir);
    if (mkdir(store_dir, 0700) < 0 || mkdir(runs, 0700) < 0)
        abort();
    snprintf(base_path, sizeof base_path, "%s/base.json", runs);
    snprintf(cand_path, sizeof cand_path, "%s/fuzz.json", runs);
    json_error_t je;
    baseline = json_loads(baseline_json, 0, &je);
    FILE *f = fopen(base_path, "w");
    if (!baseline || !f || fputs(baseline_json, f) < 0 || fclose(f) != 0)
        abort();
    char err[1024];
    if (store_record(store_dir, base_path, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_result: %s\n", err);
        abort();
    }
}

/* `history --detect` of the store in every view: text, JSON and the dashboards. */
static void history(void)
{
    char err[1024];
    struct store *s = store_open(store_dir, err, sizeof err);
    if (!s)
        abort(); /* it was just written to */
    struct store_history sh;
    int rc = store_history_read(s, &(struct store_query){0}, &sh, err, sizeof err);
    store_close(s);
    if (rc < 0)
        abort();
    sh.doc.detect = true;
    sh.doc.min_effect_pct = DETECT_DEFAULT_MIN_EFFECT_PCT;
    sh.doc.z = DETECT_DEFAULT_Z;
    history_series_build(&sh.doc, true);
    (void)history_text_print(devnull, &sh.doc);
    history_json_print(devnull, &sh.doc);
    (void)history_regressed(&sh.doc);
    for (const char *const *f = (const char *const[]){"md", "csv", "html", NULL}; *f; f++)
        (void)history_format_find(*f)->write(devnull, &sh.doc, err, sizeof err);
    history_series_free(&sh.doc);
    store_history_free(&sh);
}

static void reports(json_t *const *results, const char *const *paths, size_t n)
{
    json_t *cmp = NULL;
    if (n >= 2) {
        struct compare_options opt;
        compare_options_default(&opt);
        opt.resamples = 100; /* the bootstrap's cost is not what is fuzzed */
        cmp = compare_results(results, paths, n, &opt);
        if (!cmp)
            abort(); /* compare.h: never fails on odd content */
        (void)export_compare_print(devnull, cmp, false); /* compare's text */
        (void)export_compare_print(devnull, cmp, true);  /* compare -v */
        struct compare_gates gates = {.fail_if_slower_pct = 5, .max_accuracy_drop = 1};
        char msg[4096];
        (void)compare_check_gates(cmp, &gates, msg, sizeof msg);
    }
    static const char *const tables[] = {NULL, "runs", "samples", "comparison"};
    char err[1024];
    for (size_t i = 0; export_at(i); i++) {
        const struct exporter *x = export_at(i);
        size_t nt = (x->uses & EXPORT_USES_TABLE) ? sizeof tables / sizeof *tables : 1;
        for (size_t t = 0; t < nt; t++) {
            struct export_request req = {.results = results, .paths = paths, .n = n,
                                         .comparison = cmp, .run = -1, .table = tables[t]};
            (void)export_write(x, devnull, &req, err, sizeof err);
            if (x->uses & EXPORT_USES_RUN) {
                req.run = 1;
                (void)export_write(x, devnull, &req, err, sizeof err);
            }
        }
    }
    json_decref(cmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!baseline)
        setup();
    const char *path = fuzz_write_file("r.json", data, size);
    char err[1024];
    json_t *r = doc_result_load_file(path, err, sizeof err);
    if (!r) {
        if (!err[0])
            abort(); /* a refusal must say why */
        return 0;
    }

    (void)export_text_print(devnull, r, path, false); /* show */
    (void)export_text_print(devnull, r, path, true);  /* show -v */
    export_text_print_json(devnull, r, path); /* run --json */

    /* the store's indexing, then history of the store with it */
    FILE *f = fopen(cand_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    if (store_record(store_dir, cand_path, r, err, sizeof err) == 0)
        history();

    /* the reports, and compare against the baseline and against itself */
    json_t *one[] = {r};
    const char *one_path[] = {path};
    reports(one, one_path, 1);
    json_t *two[] = {baseline, r};
    const char *two_paths[] = {base_path, path};
    reports(two, two_paths, 2);
    json_t *self[] = {r, r};
    reports(self, NULL, 2);

    if (unlink(cand_path) < 0)
        abort();
    json_decref(r);
    fflush(stdout);
    return 0;
}
