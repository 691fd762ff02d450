/* oom_cgroup: how many processes the kernel's OOM killer has killed in a memory cgroup, read
 * from the cgroup a process is in: cgroup v2 memory.events ("oom_kill N", which counts the
 * cgroup and its descendants), or the v1 memory controller's memory.oom_control (which has
 * oom_kill from Linux 4.13). The workload is spawned in mlbench's own cgroup, so the caller
 * reads mlbench's count before and after a run and passes the difference to oom_classify. */
#ifndef MLBENCH_OOM_CGROUP_H
#define MLBENCH_OOM_CGROUP_H

#include <sys/types.h>

/* The oom_kill count of the memory cgroup that process pid is in (0: the calling process),
 * under the roots $MLBENCH_PROC_ROOT (default /proc) and $MLBENCH_SYS_ROOT (default /sys), the
 * fake-tree overrides the sources use. -1 when it cannot be read (no cgroup file, no memory
 * controller, a kernel without the counter). Where the v1 memory controller is mounted
 * (hybrid hierarchies) its count is used, else the v2 one (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified). Thread-safe. */
long oom_cgroup_kills(pid_t pid);

/* The same under explicit roots (proc_root holds <pid>/cgroup, sys_root holds fs/cgroup/). */
long oom_cgroup_kills_at(const char *proc_root, const char *sys_root, pid_t pid);

#endif
