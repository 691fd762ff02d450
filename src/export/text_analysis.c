/* text_analysis: the analysis in the terminal summary of a result (text.c): the answer of the
 * default view (the bottleneck in words, the top findings, each piece of advice once) and, with
 * -v, every stage's verdict and every finding. See text_analysis.h. */
#include "export/text_analysis.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/result.h"
#include "export/export.h"
#include "export/table.h"
#include "export/text.h"
#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

/* " [rule]: evidence\n     -> advice (could save about X a run)\n": a finding after its
 * number and stages. */
static void finding_body(FILE *out, const struct doc_finding *f)
{
    char t[32];
    fprintf(out, " [%s]: ", str_or(f->rule, "?"));
    text_lines(out, str_or(f->evidence, ""), "     ");
    fputs("\n     -> ", out);
    text_lines(out, str_or(f->recommendation, ""), "     ");
    if (f->saving_ns > 0)
        fprintf(out, " (could save about %s a run)", units_duration(f->saving_ns, t, sizeof t));
    putc('\n', out);
}

void text_analysis(FILE *out, const struct doc_result *r)
{
    const struct doc_analysis *a = &r->analysis;
    char name[4 * EXPORT_TEXT_NAME_COLS + 8], sh[16];
    fputs("\nverdicts", out);
    if (a->bottleneck)
        fprintf(out, " (bottleneck: %s)",
                term_fit(a->bottleneck, EXPORT_TEXT_NAME_COLS, name, sizeof name));
    fputs(":\n", out);
    struct export_table v;
    export_table_init(&v, 3, "", "", "");
    v.numeric = 0x2;
    for (size_t i = 0; i < a->n_verdicts; i++) {
        const char *stage = str_or(a->verdicts[i].stage, "?");
        size_t row = export_table_row(&v, 0);
        char *evidence = text_indented(str_or(a->verdicts[i].evidence, ""), "    ");
        export_table_set(&v, row, 0, "%s", stage);
        export_table_set(&v, row, 1, "%s", export_fmt_num(doc_result_stage_share(r, stage),
                                                          "%.1f%%", 100, sh, sizeof sh));
        export_table_set(&v, row, 2, "%s: %s", str_or(a->verdicts[i].rule, "?"), evidence);
        free(evidence);
    }
    const struct export_text_column col[3] = {
        {.min = TEXT_VERDICT_COLS, .cap = EXPORT_TEXT_NAME_COLS, .sep = "  "}, {.width = 6, .sep = " "},
        {.sep = "  "}};
    export_table_print(out, &v, &(struct export_text_layout){.col = col, .trim = true});
    export_table_free(&v);
    if (a->n_findings)
        fputs("findings, most important first (saving, then stage share):\n", out);
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct doc_finding *f = &a->findings[i];
        fprintf(out, "  %zu. %s", i + 1,
                term_fit(str_or(f->stage, "?"), EXPORT_TEXT_NAME_COLS, name, sizeof name));
        finding_body(out, f);
    }
}

/* ---- the answer (the default view) ---- */

#define TOP_FINDINGS 3

/* What a verdict means, in words a person acts on (docs/analysis.md has the rules). */
static const struct {
    const char *rule, *words;
} verdict_words[] = {
    {"idle", "it waits on something mlbench does not measure (sleeps, the network, locks, another "
             "process)"},
    {"mixed", "no one resource is saturated"},
    {"io-bound", "it waits for its own disk I/O"},
    {"cpu-bound-single-thread", "one thread on one core sets its pace"},
    {"cpu-bound-one-core", "its processes together keep about one core busy"},
    {"cpu-bound-parallel", "the CPU cores it uses set its pace"},
    {"cpu-bound", "the machine's only CPU sets its pace"},
    {"cpu-starved", "its threads wait for a CPU"},
    {"gpu-bound", "the GPU sets its pace"},
    {"gpu-under-occupied", "the GPU is busy, but its kernels fill few of the SMs"},
    {"gpu-starved", "the GPU waits for its input"},
    {"launch-bound", "the GPU waits for the host to launch kernels"},
    {"memory-bound", "the machine is short of memory"},
    {"unmeasured", "too little was measured to say what bounds it"},
};

static const char *words_of(const char *rule)
{
    for (size_t i = 0; rule && i < sizeof verdict_words / sizeof verdict_words[0]; i++)
        if (!strcmp(rule, verdict_words[i].rule))
            return verdict_words[i].words;
    return NULL;
}

static const struct doc_verdict *verdict_of(const struct doc_analysis *a, const char *stage)
{
    for (size_t i = 0; stage && i < a->n_verdicts; i++)
        if (a->verdicts[i].stage && !strcmp(a->verdicts[i].stage, stage))
            return &a->verdicts[i];
    return NULL;
}

/* Whether findings i and k say the same thing (a parent and its children, or two stages that
 * sleep): the same rule and the same advice. */
static bool same_advice(const struct doc_finding *i, const struct doc_finding *k)
{
    return i->rule && k->rule && !strcmp(i->rule, k->rule) && i->recommendation &&
           k->recommendation && !strcmp(i->recommendation, k->recommendation);
}

/* Whether finding f says what a warning of the result says already: the run's other-load and
 * cpu-contention findings and the warnings other_load and cpu_contention (a warning is printed
 * anyway; issue 35: the same disturbance was said twice). */
static bool warned(const struct doc_result *r, const struct doc_finding *f)
{
    char code[64];
    snprintf(code, sizeof code, "%s", str_or(f->rule, ""));
    for (char *c = code; *c; c++)
        if (*c == '-')
            *c = '_';
    /* a result warns a few dozen times at most; a hostile file's thousands are not read */
    for (size_t i = 0; i < r->n_warnings && i < 256; i++)
        if (r->warnings[i].code && !strcmp(r->warnings[i].code, code))
            return true;
    return false;
}

/* The answer first (issue 35): the bottleneck and its verdict in words, then the top findings,
 * each piece of advice once with the stages it is for, none a warning says already. */
void text_answer(FILE *out, const struct doc_result *r)
{
    const struct doc_analysis *a = &r->analysis;
    char name[4 * EXPORT_TEXT_NAME_COLS + 8], t[32];
    const char *stage = a->bottleneck ? a->bottleneck : "total";
    const struct doc_verdict *v = verdict_of(a, stage);
    putc('\n', out);
    if (v) {
        const char *words = words_of(v->rule);
        if (a->bottleneck)
            fprintf(out, "answer: %s holds the run back (%s of it): ",
                    term_fit(stage, EXPORT_TEXT_NAME_COLS, name, sizeof name),
                    export_fmt_num(doc_result_stage_share(r, stage), "%.1f %%", 100, t,
                                   sizeof t));
        else
            fputs("answer: the whole run (no stages): ", out);
        fprintf(out, "%s, %s", str_or(v->rule, "?"), words ? words : "");
        if (v->evidence && *v->evidence) {
            fputs(words ? "; " : "", out);
            text_lines(out, v->evidence, "  ");
        }
        /* start-up larger than the bottleneck: said, not hidden behind it */
        double before = doc_result_before_first_stage(r), wall = r->summary.wall.median;
        double share = doc_result_stage_share(r, stage);
        if (a->bottleneck && isfinite(before) && wall > 0 && before / wall > share)
            fprintf(out, " (more of the run, %.0f %%, is start-up before the first stage)",
                    100 * before / wall);
        putc('\n', out);
    }
    size_t shown = 0, more = 0;
    bool *done = xcalloc(a->n_findings + 1, sizeof *done);
    for (size_t i = 0; i < a->n_findings; i++) {
        if (done[i])
            continue;
        if (shown == TOP_FINDINGS) { /* the rest are counted, not grouped: -v lists them */
            more++;
            continue;
        }
        if (warned(r, &a->findings[i]))
            continue;
        const struct doc_finding *f = &a->findings[i];
        if (!shown)
            fputs("findings, most important first:\n", out);
        fprintf(out, "  %zu. %s", ++shown,
                term_fit(str_or(f->stage, "?"), EXPORT_TEXT_NAME_COLS, name, sizeof name));
        for (size_t k = i + 1; k < a->n_findings; k++)
            if (!done[k] && same_advice(f, &a->findings[k])) {
                done[k] = true;
                fprintf(out, ", %s", term_fit(str_or(a->findings[k].stage, "?"),
                                              EXPORT_TEXT_NAME_COLS, name, sizeof name));
            }
        finding_body(out, f);
    }
    free(done);
    if (more)
        fprintf(out, "  (%zu more: mlbench show -v)\n", more);
}
