/* marker_parse: parses one datagram of the marker protocol (docs/markers.md):
 *   <kind> <t_ns> <pid> <tid> <name>[ <value>]
 * Pure function, thread-safe, no allocation. */
#ifndef MLBENCH_MARKER_PARSE_H
#define MLBENCH_MARKER_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "mlbench/marker.h"

#define MARKER_MAX_EVENT MLBENCH_MARKER_MAX_EVENT /* bytes in one datagram */

enum marker_kind {
    MARKER_BEGIN = 'B',
    MARKER_END = 'E',
    MARKER_COUNTER = 'C',
    MARKER_META = 'M',
    MARKER_INSTANT = 'I',
};

/* One parsed event. name and value point into the parsed buffer (not NUL-terminated). */
struct marker_token {
    char kind;
    int64_t t_ns;   /* CLOCK_MONOTONIC of the sender */
    int32_t pid, tid;
    const char *name;
    size_t name_len;
    const char *value; /* M: the rest of the datagram (may be empty); else NULL */
    size_t value_len;
    double number;     /* C: the counter value */
};

/* Parses buf[0..len). Returns NULL on success, or a short static reason ("overlong",
 * "unknown kind", "bad timestamp", ...) when the datagram is malformed. */
const char *marker_parse(const char *buf, size_t len, struct marker_token *tok);

#endif
