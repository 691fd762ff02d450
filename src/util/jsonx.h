/* jsonx: typed getters for jansson documents that tolerate anything: a missing key, a null or
 * a value of the wrong type give the "absent" answer (NULL, NAN, the fallback), never a crash.
 * For documents read back from files that may be old, edited or hostile. Thread-safe on
 * documents nobody modifies. And the one builder writers share for a figure that may be unknown
 * (jsonx_real_or_null). */
#ifndef MLBENCH_JSONX_H
#define MLBENCH_JSONX_H

#include <jansson.h>

/* v as a double when it is a number (integer or real), else NAN. */
double jsonx_number(const json_t *v);
/* o[key] as a double, or NAN (o may be NULL or not an object). */
double jsonx_num(const json_t *o, const char *key);
/* o[key] when it is a string, else NULL. */
const char *jsonx_str(const json_t *o, const char *key);
/* o[key] as a count in [0, max]: a number outside it (negative, huge, fractional, NaN) or
 * anything else gives fallback. For counts read from files before they meet arithmetic,
 * allocation sizes or loop bounds: no signed overflow, no out-of-range float conversion. */
long long jsonx_count(const json_t *o, const char *key, long long max, long long fallback);
/* o[key] when it is an integer (a real in range is rounded to the nearest), else fallback. */
long long jsonx_int(const json_t *o, const char *key, long long fallback);

/* o[key] when it is an object (an array), else NULL. */
const json_t *jsonx_object(const json_t *o, const char *key);
const json_t *jsonx_array(const json_t *o, const char *key);
/* o[key] as a boolean that may be absent: 1 true, 0 false, -1 anything else. */
int jsonx_bool(const json_t *o, const char *key);

/* For writers: a new JSON real of v, or null when v is not finite (NAN: not measured). */
json_t *jsonx_real_or_null(double v);
/* For writers: a new JSON integer of the whole number v (a count), or null when v is not finite
 * or not below 1e15 in magnitude. */
json_t *jsonx_count_or_null(double v);

#endif
