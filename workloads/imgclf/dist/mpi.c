/* dist on MPI (see dist.h). */
#include "imgclf/dist.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/opts.h"

int dist_available(void)
{
    return 1;
}

int dist_init(int *argc, char ***argv, struct dist *d)
{
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        wl_error("imgclf", "--ranks: MPI_Init failed: run it under mpirun (or mpiexec, srun)");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &d->local_size);
    MPI_Comm_free(&local);
    return 0;
}

void dist_finalize(void)
{
    MPI_Finalize();
}

void dist_abort(int status)
{
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, status);
    _Exit(status); /* not reached: MPI_Abort does not return */
}

void dist_barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}

void dist_sum_floats(float *buf, size_t n)
{
    /* In pieces of at most INT_MAX elements: MPI counts are int. */
    for (size_t done = 0; done < n;) {
        size_t k = n - done < (size_t)1 << 30 ? n - done : (size_t)1 << 30;
        MPI_Allreduce(MPI_IN_PLACE, buf + done, (int)k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        done += k;
    }
}

void dist_sum_doubles(double *buf, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int dist_same(uint64_t v)
{
    uint64_t lo = v, hi = v;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}
