/* progress: the live status line on stderr (run i/N, current stage, elapsed, ETA) when stderr
 * is a terminal, and plain per-run lines otherwise. Without a terminal nothing it prints holds
 * a control character. Used from one thread. */
#ifndef MLBENCH_PROGRESS_H
#define MLBENCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
    bool tty;     /* stderr is a terminal: redraw one line in place */
    bool quiet;   /* print nothing at all */
    bool shown;   /* a status line is on the screen */
};

void progress_init(struct progress *p, bool quiet);
/* Redraws the status line (terminal only). eta_ns < 0: unknown. */
void progress_status(struct progress *p, const char *what, const char *stage, int64_t elapsed_ns,
                     int64_t eta_ns);
/* Prints a permanent line (erasing the status line first), cleaned for the terminal
 * (term_clean); nothing when quiet. */
void progress_line(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, quiet or not: why a run failed is an error, which -q still prints. */
void progress_error(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Erases the status line. */
void progress_clear(struct progress *p);

#endif
