/* log: messages from the harness to the user on stderr, prefixed "mlbench: ".
 * Thread-safe (one fprintf per message). */
#ifndef MLBENCH_LOG_H
#define MLBENCH_LOG_H

/* An error the user must act on. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Something measured may be off, or a part could not run; the run goes on. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informative line; suppressed by log_set_quiet(1). */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_set_quiet(int quiet);

#endif
