/* prometheus: a writer of the Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). It knows nothing of what is
 * measured: live.c decides the families and feeds them here.
 *
 * The text goes into a growable buffer. A family is written as one block: its HELP and TYPE
 * lines, then its samples. Label values are escaped (\\ \" \n), HELP text is escaped (\\ \n),
 * and both are kept valid UTF-8 (a bad byte becomes '?'). Values are written in the shortest
 * form that reads back exactly, with NaN, +Inf and -Inf spelled as the format wants.
 *
 * Pure functions of their arguments: thread-safe on distinct buffers. Allocation goes through
 * xalloc (aborts on failure). */
#ifndef MLBENCH_PROMETHEUS_H
#define MLBENCH_PROMETHEUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/* The content type of what this writer produces, for the HTTP response. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum prom_type {
    PROM_COUNTER,
    PROM_GAUGE,
    PROM_HISTOGRAM,
};

/* True when name is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). */
bool prom_valid_name(const char *name);
/* True when name is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__"). */
bool prom_valid_label_name(const char *name);

/* Writes value into buf (at least 32 bytes) the way the format wants it: "NaN", "+Inf",
 * "-Inf", or the shortest decimal that parses back to the same double ("0.1", "42", "1e-09").
 * Returns buf. */
char *prom_format_value(double value, char *buf, size_t len);

/* Appends s[0..len) escaped for a label value: backslash, double quote and newline become
 * \\ \" \n; bytes that are not well-formed UTF-8 become '?'. */
void prom_escape_label_value(struct strbuf *b, const char *s, size_t len);

/* Appends `key="value"` to a label list being built in lb (a comma first when lb is not empty).
 * The value is escaped; key must be a valid label name. */
void prom_labels_add(struct strbuf *lb, const char *key, const char *value);

/* Starts a family: "# HELP name help" (help escaped) and "# TYPE name type". */
void prom_family(struct strbuf *b, const char *name, enum prom_type type, const char *help);

/* One sample line: name{labels} value. labels is a formatted label list (prom_labels_add, or a
 * sampler series' labels such as `gpu="0"`); NULL or "" for none. */
void prom_sample(struct strbuf *b, const char *name, const char *labels, double value);
/* Same with a whole number (counts), written without rounding through double. */
void prom_sample_u64(struct strbuf *b, const char *name, const char *labels, uint64_t value);

/* The samples of one histogram series: name_bucket{labels,le="b"} for each bound (cumulative)
 * and le="+Inf", then name_sum and name_count. bounds[0..n_bounds) are increasing upper bounds;
 * counts[0..n_bounds] are observations per bucket, not cumulative: counts[i] fell in
 * (bounds[i-1], bounds[i]], counts[n_bounds] above the last bound. */
void prom_histogram(struct strbuf *b, const char *name, const char *labels,
                    const double *bounds, size_t n_bounds, const uint64_t *counts, double sum);

#endif
