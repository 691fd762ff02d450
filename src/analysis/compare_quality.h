/* compare_quality: the measurement quality of the two sides of a comparison (docs/compare.md
 * #measurement-quality-unreliable): the warnings each side carries, and whether a disturbance
 * explains a difference. Used by compare.c and the compare_*.c that give verdicts. Pure
 * functions on results read through doc/result.h, thread-safe. */
#ifndef MLBENCH_COMPARE_QUALITY_H
#define MLBENCH_COMPARE_QUALITY_H

#include <stdbool.h>

#include <jansson.h>

#include "doc/result.h"

/* {"baseline": [W...], "candidate": [W...]}: copies ({code, message}) of the warnings of each
 * side that are about measurement quality (the codes docs/compare.md lists). New reference. */
json_t *compare_quality(const struct doc_result *base, const struct doc_result *cand);

/* Why a difference of stage (NULL: the whole run) could come from a disturbance of the side
 * that came out slower (the candidate when cand_slower): a new string (free it), or NULL when
 * no disturbance explains it. *hits gains a bit per kind of disturbance named, for
 * compare_clean_answer(). */
char *compare_explain(const struct doc_result *base, const struct doc_result *cand,
                      const char *stage, bool cand_slower, unsigned *hits);

/* How to get a clean answer after the disturbances in hits (compare_explain's bits): a new
 * string, or NULL when hits is 0. */
char *compare_clean_answer(unsigned hits);

#endif
