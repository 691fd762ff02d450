/* analysis/history.c: a history's benchmarks, figures and series, and the step changes in
 * each (analysis/history.h). */
#include "analysis/history.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/detect.h"
#include "util/xalloc.h"

/* The figures shown: the one asked for, else "total" then the stages in order of first
 * appearance. */
static const char **stage_names(const struct doc_history *h, size_t *n)
{
    size_t cap = 8, k = 0;
    const char **names = xcalloc(cap, sizeof *names);
    if (h->stage) {
        names[k++] = h->stage;
        *n = k;
        return names;
    }
    names[k++] = DOC_HISTORY_TOTAL;
    for (size_t i = 0; i < h->n_results; i++)
        for (size_t j = 0; j < h->results[i].n_stages; j++) {
            const char *name = h->results[i].stages[j].name;
            bool seen = !name;
            for (size_t m = 0; m < k && !seen; m++)
                seen = !strcmp(names[m], name);
            if (seen)
                continue;
            if (k == cap) {
                cap *= 2;
                names = xreallocarray(names, cap, sizeof *names);
            }
            names[k++] = name;
        }
    *n = k;
    return names;
}

/* Whether results a and b are of one benchmark: the same label, or the same command when
 * neither has a label. */
static bool same_benchmark(const struct doc_history_result *a, const struct doc_history_result *b)
{
    if (a->label)
        return b->label && !strcmp(a->label, b->label);
    return !b->label && !strcmp(a->command ? a->command : "", b->command ? b->command : "");
}

/* The benchmark of each result into group[]; returns their count. */
static size_t group_results(const struct doc_history *h, size_t *group)
{
    size_t groups = 0;
    for (size_t i = 0; i < h->n_results; i++) {
        group[i] = groups;
        for (size_t j = 0; j < i; j++)
            if (same_benchmark(&h->results[i], &h->results[j])) {
                group[i] = group[j];
                break;
            }
        if (group[i] == groups)
            groups++;
    }
    return groups;
}

/* The series of benchmark g and figure `stage` into *s: its points, and the changes detect.c
 * finds in them. p is scratch room for n_results points. */
static void one_series(const struct doc_history *h, size_t g, const char *stage,
                       const struct detect_options *opt, struct detect_point *p,
                       struct doc_history_series *s)
{
    size_t n = h->n_results, first = 0;
    while (first < n && h->benchmark[first] != g)
        first++;
    struct doc_history_point *pt = xcalloc(n + 1, sizeof *pt);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct doc_history_stats *t =
            h->benchmark[i] == g ? doc_history_trend_figure(&h->results[i], stage) : NULL;
        if (!t)
            continue;
        p[m] = (struct detect_point){t->median_ns, t->ci_low_ns, t->ci_high_ns, t->ci_level,
                                     t->mad_ns, t->n};
        pt[m++] = (struct doc_history_point){i, t->n, t->median_ns, t->ci_low_ns, t->ci_high_ns,
                                             t->ci_level};
    }
    struct detect_change *c = NULL;
    size_t k = detect_changes(p, m, opt, &c);
    struct doc_history_change *hc = xcalloc(k + 1, sizeof *hc);
    for (size_t j = 0; j < k; j++)
        hc[j] = (struct doc_history_change){c[j].index, c[j].before, c[j].after, c[j].change_pct,
                                            c[j].z};
    free(c);
    const struct doc_history_result *r = first < n ? &h->results[first] : NULL;
    *s = (struct doc_history_series){g, r ? r->label : NULL, r ? r->command : NULL, stage,
                                     pt, m, hc, k};
}

void history_series_build(struct doc_history *h, bool series)
{
    size_t *group = xcalloc(h->n_results + 1, sizeof *group);
    h->n_benchmarks = group_results(h, group);
    h->benchmark = group;
    size_t n_stages;
    h->stages = stage_names(h, &n_stages);
    h->n_stages = n_stages;
    if (!series)
        return;
    const struct detect_options opt = {h->min_effect_pct, h->z};
    struct detect_point *p = xcalloc(h->n_results + 1, sizeof *p);
    struct doc_history_series *v = xcalloc(h->n_benchmarks * n_stages + 1, sizeof *v);
    size_t k = 0;
    for (size_t g = 0; g < h->n_benchmarks; g++)
        for (size_t s = 0; s < n_stages; s++) {
            one_series(h, g, h->stages[s], &opt, p, &v[k]);
            if (v[k].n_points == 0 && s > 0) {
                free((void *)v[k].points);
                free((void *)v[k].changes);
                continue;
            }
            k++;
        }
    free(p);
    h->series = v;
    h->n_series = k;
}

void history_series_free(struct doc_history *h)
{
    for (size_t k = 0; k < h->n_series; k++) {
        free((void *)h->series[k].points);
        free((void *)h->series[k].changes);
    }
    free((void *)h->series);
    free((void *)h->stages);
    free((void *)h->benchmark);
    h->series = NULL;
    h->stages = NULL;
    h->benchmark = NULL;
    h->n_series = h->n_stages = h->n_benchmarks = 0;
}

size_t history_newest(const struct doc_history *h, size_t b)
{
    size_t newest = h->n_results;
    for (size_t i = 0; i < h->n_results; i++)
        if (h->benchmark[i] == b)
            newest = i;
    return newest;
}

bool history_regressed(const struct doc_history *h)
{
    for (size_t k = 0; k < h->n_series; k++) {
        const struct doc_history_series *s = &h->series[k];
        size_t newest = history_newest(h, s->benchmark);
        for (size_t j = 0; j < s->n_changes; j++)
            if (s->points[s->changes[j].point].result == newest && s->changes[j].change_pct > 0)
                return true;
    }
    return false;
}
