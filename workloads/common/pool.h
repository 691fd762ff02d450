/* pool: a fork-join thread pool. pool_run runs one function on every worker (the caller is
 * worker 0) and returns when all have finished. Used by the CNN (data parallel over
 * micro-batches) and anywhere else a workload splits one job over --threads cores.
 * One pool must be driven by one thread at a time. */
#ifndef MLBENCH_WL_POOL_H
#define MLBENCH_WL_POOL_H

struct pool;

/* A pool of n workers (n >= 1; n - 1 threads are started). NULL if a thread cannot start. */
struct pool *pool_create(int n);
/* Stops and joins the threads. NULL is allowed. */
void pool_free(struct pool *p);
int pool_size(const struct pool *p);
/* Calls fn(arg, worker, n) on each worker 0..n-1 concurrently and waits for all. */
void pool_run(struct pool *p, void (*fn)(void *arg, int worker, int n), void *arg);

#endif
