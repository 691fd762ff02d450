/* cost: what a result cost at the user's price per hour (result/price.h): per run (from the
 * total wall median and its interval), per stage (each stage's active median), per unit of
 * work for count counters ("USD per 1M train_images") and to a target (time_to_target_s
 * counters). The `cost` object of a result (docs/result-schema.md#cost). Pure arithmetic,
 * thread-safe. */
#ifndef MLBENCH_COST_H
#define MLBENCH_COST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "result/price.h"
#include "result/summary.h"

/* The cost of seconds of the machine at per_hour; NAN when seconds is not a finite number
 * >= 0 or per_hour not a finite number > 0. */
double cost_of_seconds(double seconds, double per_hour);

/* The power of ten (1, 1e3, 1e6, ... 1e12) that makes a cost per unit readable: the smallest
 * with cost_per_unit * per >= 0.01 (a cent or more), 1e12 at most; 1 when cost_per_unit is not
 * a finite number > 0. */
double cost_unit_scale(double cost_per_unit);

/* per (a cost_unit_scale answer) as people write it: "1", "1k", "1M", "1B", "1T". */
const char *cost_unit_label(double per);

/* True for a counter that says when a target was reached, in seconds: "time_to_target_s" or a
 * name ending in "_time_to_target_s". */
bool cost_is_to_target(const char *counter);

/* The cost object of a result whose summary is s, priced by m (m->priced must be true): a new
 * reference ({price_per_hour, currency, source, price_file, run, stages, per_unit, to_target};
 * figures that cannot be computed are null). */
json_t *cost_json(const struct summary *s, const struct price_match *m);

#endif
