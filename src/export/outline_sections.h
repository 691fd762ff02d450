/* outline_sections.h: the sections of the report outline that have a file of their own, which
 * export_outline (outline.c) calls in reading order. Each writes with outline_write.h only. */
#ifndef MLBENCH_EXPORT_OUTLINE_SECTIONS_H
#define MLBENCH_EXPORT_OUTLINE_SECTIONS_H

#include "export/outline_write.h"

/* The comparison of o->req->cmp (outline_compare.c): its answer (the verdict of each
 * candidate), then its section. */
void outline_comparison_answer(struct outline *o);
void outline_comparison(struct outline *o);

/* The sweep of o->req->sweep (outline_sweep.c). */
void outline_sweep(struct outline *o);

/* The "Ranks" section of a multi-rank job's result r (outline_ranks.c); nothing with fewer
 * than 2 ranks. */
void outline_ranks(struct outline *o, const struct doc_result *r);

/* The "Load" section of the load result o->req->docs[index], whose load section is load
 * (outline_load.c): its runs, figures and seconds; nothing when load is not present. */
void outline_load(struct outline *o, const struct doc_load *load, size_t index);
/* The answer a report on a load result opens with (its Summary): whether it is VALID, what
 * bounds it, and the metric percentile and throughput of each run that counts. */
void outline_load_answer(struct outline *o, const struct doc_load *load);

#endif
