/* compare_scaling: the scaling across ranks of a comparison, for compare.c
 * (docs/compare.md#scaling). Pure functions on result documents, thread-safe. */
#ifndef MLBENCH_COMPARE_SCALING_H
#define MLBENCH_COMPARE_SCALING_H

#include <jansson.h>

#include "doc/result.h"

/* The scaling across ranks (docs/compare.md#scaling): a new object when the two results ran on
 * different numbers of ranks and a throughput is known on both, else a JSON null. */
json_t *compare_scaling(const struct doc_result *base, const struct doc_result *cand);

#endif
