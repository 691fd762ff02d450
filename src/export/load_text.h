/* load_text: the terminal view of a load result (a result of `mlbench load`, whose "load"
 * section doc/load.h reads): what `mlbench load` prints when it ends and `mlbench show` prints
 * of a stored one. Not thread-safe (one call at a time per stream). */
#ifndef MLBENCH_EXPORT_LOAD_TEXT_H
#define MLBENCH_EXPORT_LOAD_TEXT_H

#include <stdio.h>

#include <jansson.h>

/* Prints the load section of the result document doc to out: the endpoint and scenario, the
 * table of scenario runs (role, target and achieved QPS, latency percentiles, the
 * early-stopping estimate, the verdict, and why a run that counts was INVALID), the peak of a
 * peak search, the server's resources and markers during the last run, the bound verdict, and
 * the result's verdict with "result PATH" when path is not NULL. doc is borrowed; what it lacks
 * prints as "-" or is left out. Written through export_text_compose (no control character of
 * the document reaches out). Returns 0, or -1 when out cannot be written. */
int export_load_print(FILE *out, const json_t *doc, const char *path);

/* What `mlbench show` prints of a stored load result doc: a line naming it (its id, when it was
 * created, its label), then the view of export_load_print. Returns 0, or -1 when out cannot be
 * written. */
int export_load_print_stored(FILE *out, const json_t *doc, const char *path);

#endif
