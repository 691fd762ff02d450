/* outline_private.h: what the parts of the report outline (outline.c, outline_sweep.c) share:
 * the outline being written and its primitives, each one call of the format's
 * export_outline_ops. For src/export/outline*.c only. */
#ifndef MLBENCH_EXPORT_OUTLINE_PRIVATE_H
#define MLBENCH_EXPORT_OUTLINE_PRIVATE_H

#include "export/export.h"

struct outline {
    const struct export_outline_ops *ops;
    void *ctx;
    const struct export_request *req;
    int level;  /* heading level of a result's sections */
};

/* A heading, a paragraph (printf-style; the text is the format's to escape). */
void outline_heading(struct outline *o, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void outline_para(struct outline *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Renders t and frees it. */
void outline_table(struct outline *o, struct export_table *t);
/* A group of ops->group_begin/group_end; a FOLDED one without them is a heading. */
void outline_group_begin(struct outline *o, enum export_group g, const char *title);
void outline_group_end(struct outline *o, enum export_group g);

/* A list of strings being built (sl_add), then handed to ops->list and freed (o_list). */
struct strlist {
    char **v;
    size_t n, cap;
};
void sl_add(struct strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void o_list(struct outline *o, struct strlist *l);

/* The comparison of o->req->comparison (outline_compare.c): its answer (the verdict of each
 * candidate), then its section. */
void outline_comparison_answer(struct outline *o);
void outline_comparison(struct outline *o);

/* The sweep of o->req->sweep (outline_sweep.c). */
void outline_sweep(struct outline *o);

/* The "Ranks" section of a multi-rank job's result r (outline_ranks.c); nothing with fewer
 * than 2 ranks. */
void outline_ranks(struct outline *o, const json_t *r);

/* The "Load" section of a load result (outline_load.c): its runs, figures and seconds. */
void outline_load(struct outline *o, const json_t *r, size_t index);
/* The answer a report on a load result opens with (its Summary): whether it is VALID, what
 * bounds it, and the metric percentile and throughput of each run that counts. */
void outline_load_answer(struct outline *o, const json_t *r);
/* The load table of one candidate of a comparison (its "load" object), if any. */
void outline_load_comparison(struct outline *o, const json_t *cand);

#endif
