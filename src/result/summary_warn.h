/* summary_warn: the warnings about measurement quality a summary carries (summary.h,
 * summary.warnings; docs/result-schema.md lists the codes), and adding one. A leaf: the files
 * that compute a summary's parts (summary.c, gpu_clock.c, rank_summary.c, resources.c...) warn
 * through it without calling back into summary.c. Not thread-safe on one summary. */
#ifndef MLBENCH_SUMMARY_WARN_H
#define MLBENCH_SUMMARY_WARN_H

struct summary;

struct warning {
    char *code;                /* stable identifier, e.g. "high_cv" */
    char *message;             /* for people */
};

/* Adds a warning to s->warnings (copies code, and the message formatted from fmt, cut to 1023
 * bytes). Allocation failure aborts. */
void summary_warn(struct summary *s, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
