/* oom: did a run end because it ran out of memory? A pure classifier of what the runner saw
 * (status, exit code, signal, the tail of stderr) plus the kernel's OOM-kill count of the run's
 * cgroup (oom_cgroup.h) and the user's --oom-pattern substrings. `mlbench sweep --find-max`
 * uses it to tell "does not fit" from any other failure; docs/workloads.md ("How mlbench
 * recognises out of memory") lists what it recognises. */
#ifndef MLBENCH_OOM_H
#define MLBENCH_OOM_H

#include <stdbool.h>
#include <stddef.h>

#include "measure/runner.h"

/* mlbench-workload's documented out-of-memory exit status (workloads/common/opts.h's
 * WL_EXIT_OOM: the two must stay equal; workloads/ cannot include src/). It counts only
 * together with the workload's message "mlbench-workload NAME: out of memory...". */
#define OOM_WORKLOAD_EXIT 3

struct oom_evidence {
    enum run_status status; /* from struct run_outcome */
    int exit_code;          /* RUN_OK/RUN_FAILED; -1 otherwise */
    int signal;             /* the signal that ended the leader, 0 if none */
    const char *stderr_tail; /* run_outcome.stderr_tail; may be NULL */
    long cgroup_oom_kills;  /* oom_kill events in the run's cgroup during the run (after minus
                             * before, oom_cgroup_kills), -1 unknown */
    const char *const *patterns; /* --oom-pattern: extra substrings of stderr (case-sensitive) */
    size_t n_patterns;
};

/* True when the run ran out of memory. reason (len bytes, always terminated) says how it was
 * recognised, for people: "mlbench-workload's out-of-memory status (exit 3)", "PyTorch:
 * torch.OutOfMemoryError", "killed by the kernel's OOM killer (oom_kill +1 in the cgroup's
 * memory events)", "stderr matches --oom-pattern 'X'". When false, reason is "" except for a
 * SIGKILL, where it says why that was not taken for out of memory. A run that succeeded, timed
 * out or was interrupted never ran out of memory; an exit status or a SIGKILL alone proves
 * nothing. Pure and thread-safe; reason may be NULL when len is 0. */
bool oom_classify(const struct oom_evidence *e, char *reason, size_t len);

#endif
