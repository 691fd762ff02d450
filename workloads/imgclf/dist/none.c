/* dist without MPI (see dist.h): this build was made where CMake found no MPI. */
#include "imgclf/dist.h"

#include <stdlib.h>

#include "common/opts.h"

int dist_available(void)
{
    return 0;
}

int dist_init(int *argc, char ***argv, struct dist *d)
{
    (void)argc;
    (void)argv;
    (void)d;
    wl_error("imgclf", "--ranks: this mlbench-workload was built without MPI; install Open MPI "
                       "(apt-get install libopenmpi-dev openmpi-bin) and build again");
    return -1;
}

/* Not reached: dist_init fails, so nothing else is called. */
void dist_finalize(void) {}
void dist_abort(int status)
{
    exit(status);
}
void dist_barrier(void) {}
void dist_sum_floats(float *buf, size_t n)
{
    (void)buf;
    (void)n;
}
void dist_sum_doubles(double *buf, int n)
{
    (void)buf;
    (void)n;
}
int dist_same(uint64_t v)
{
    (void)v;
    return 1;
}
