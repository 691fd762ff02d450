/* workloads: the entry point of each reference workload, listed in main.c's table. Each takes
 * the arguments after the workload's name (argv[0] is the name) and returns the exit status:
 * 0 done, 1 failed, 2 bad input, WL_EXIT_OOM (3, common/opts.h) out of memory. */
#ifndef MLBENCH_WL_WORKLOADS_H
#define MLBENCH_WL_WORKLOADS_H

int imgclf_main(int argc, char **argv);
int logreg_main(int argc, char **argv);
int gemm_main(int argc, char **argv);
int mlp_main(int argc, char **argv);
int serve_main(int argc, char **argv);

#endif
