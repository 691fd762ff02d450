/* compare_cost: the cost of the two sides of a comparison, for compare.c (docs/compare.md#cost).
 * Pure functions on results read through doc/result.h, thread-safe. */
#ifndef MLBENCH_COMPARE_COST_H
#define MLBENCH_COMPARE_COST_H

#include <jansson.h>

#include "doc/result.h"

/* The cost comparison (docs/compare.md#cost): a new object when both results carry a `cost`,
 * else a JSON null. */
json_t *compare_cost(const struct doc_result *base, const struct doc_result *cand);

#endif
