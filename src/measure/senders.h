/* senders: decides whether a marker datagram comes from the measured process tree, from the
 * sender's pid as the kernel gives it (SCM_CREDENTIALS). A process belongs when its parent chain
 * in <proc_root>/<pid>/stat reaches mlbench itself: mlbench is a child subreaper (runner.h), so
 * every descendant of the workload, daemonised or orphaned, keeps mlbench as an ancestor, and a
 * process that is not a descendant can never become one.
 *
 * Verdicts are cached by pid (a fixed table, no allocation after senders_new) and confirmed at
 * most every SENDERS_RECHECK_NS by one read of <pid>/stat whose start time tells a reused pid
 * from the process verified before. docs/security.md gives the reasoning, including the sender
 * that ends before its datagram is checked. Not thread-safe: one receiver thread owns it. */
#ifndef MLBENCH_SENDERS_H
#define MLBENCH_SENDERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SENDERS_RECHECK_NS 10000000LL    /* 10 ms: a cached verdict is confirmed after this */
#define SENDERS_GONE_GRACE_NS 1000000000LL /* a verified pid whose process is gone is still
                                            * accepted this long after it was last confirmed */

struct senders;

/* A checker for descendants of self under proc_root ("/proc" in the harness; a fake tree in
 * tests); proc_root is copied. Returns NULL when proc_root is too long. */
struct senders *senders_new(const char *proc_root, pid_t self);
/* NULL is allowed. */
void senders_free(struct senders *s);
/* True when pid is self or one of its descendants at now_ns (CLOCK_MONOTONIC; the caller's
 * clock, so that tests can move it), or a descendant verified less than SENDERS_GONE_GRACE_NS
 * ago that has ended since. pid <= 0 (no credentials) is never accepted. */
bool senders_accept(struct senders *s, pid_t pid, int64_t now_ns);

#endif
