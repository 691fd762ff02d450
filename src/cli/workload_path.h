/* workload_path: where the reference workloads' binary, mlbench-workload, is: beside this
 * mlbench binary (the build tree, or an install's bindir), else on PATH. Used by `mlbench demo`
 * and by `mlbench run` with no command. */
#ifndef MLBENCH_WORKLOAD_PATH_H
#define MLBENCH_WORKLOAD_PATH_H

/* A malloc'd absolute path to an executable mlbench-workload, or NULL when there is none. */
char *workload_path(void);

#endif
