/* units: readable numbers for the terminal (durations, bytes) and strict number parsing
 * for options. Pure functions, thread-safe. */
#ifndef MLBENCH_UNITS_H
#define MLBENCH_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Formats a duration in nanoseconds with 4 significant digits and a unit chosen so the
 * number is in 1..999 ("812.3 us", "1.204 s", "2 min 03 s" from 60 s on). Returns buf. */
char *units_duration(double ns, char *buf, size_t len);
/* Formats a byte count with binary units ("512 B", "3.2 MiB"). Returns buf. */
char *units_bytes(double bytes, char *buf, size_t len);

/* Parses a whole decimal number in [min, max]. Returns 0, or -1 when s is empty, has
 * trailing characters, or is out of range. */
int units_parse_long(const char *s, long min, long max, long *out);
/* Parses a duration in seconds: "2.5", or with a suffix "ms", "s", "m", "h" ("150ms",
 * "1.5m"). Returns 0, or -1 when s is not a finite non-negative duration. */
int units_parse_seconds(const char *s, double *out);
/* Parses a size in bytes: "512", "1.5GiB", "64MiB", "8GB", "100k" (k/K, M, G, T: binary with
 * "iB" or alone, decimal with "B": 8GB = 8e9, 8G = 8GiB; case of the unit's letter is free;
 * one space before the unit is allowed). Returns 0, or -1 when s is not a finite size >= 0. */
int units_parse_bytes(const char *s, double *out);

/* Nonzero when s[0..len) is well-formed UTF-8 (no overlongs, surrogates or values above
 * U+10FFFF): what JSON strings need. */
int units_utf8_valid(const char *s, size_t len);
/* A copy of s[0..len) in which every byte that is not part of well-formed UTF-8 is replaced
 * by '?'; owned by the caller. */
char *units_utf8_sanitize(const char *s, size_t len);

#endif
