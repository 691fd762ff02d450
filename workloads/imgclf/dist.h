/* dist: data-parallel training across MPI ranks (imgclf --ranks; docs/ranks.md). Built on Open
 * MPI when CMake found MPI (dist/mpi.c), else a stand-in whose dist_init says how to get it
 * (dist/none.c). Every call is collective (every rank makes it, in the same order) except
 * dist_abort; MPI's default error handler ends the whole job on a communication error. Called
 * from the main thread only. */
#ifndef MLBENCH_WL_IMGCLF_DIST_H
#define MLBENCH_WL_IMGCLF_DIST_H

#include <stddef.h>
#include <stdint.h>

struct dist {
    int rank, size;
    int local_size; /* ranks on this host (sharing its memory) */
};

/* Whether this build has MPI. */
int dist_available(void);
/* Starts MPI. 0, or -1 with the message printed (no MPI in this build, or MPI_Init failed). */
int dist_init(int *argc, char ***argv, struct dist *d);
void dist_finalize(void);
/* Ends every rank of the job with status (a rank that failed: the others would wait on it). */
void dist_abort(int status) __attribute__((noreturn));
void dist_barrier(void);
/* Sums buf[0..n) over the ranks, in place (MPI_Allreduce). */
void dist_sum_floats(float *buf, size_t n);
void dist_sum_doubles(double *buf, int n);
/* 1 when every rank passed the same v, else 0. */
int dist_same(uint64_t v);

#endif
