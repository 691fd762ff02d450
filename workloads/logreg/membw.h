/* membw: the memory read bandwidth this process reaches, measured by streaming once through a
 * buffer on every worker of a pool (each its own contiguous share), best of a few passes. It is
 * the limit the logistic-regression pass is held against: one evaluation reads X once. */
#ifndef MLBENCH_WL_MEMBW_H
#define MLBENCH_WL_MEMBW_H

#include <stddef.h>

struct pool;

/* Bytes per second reading buf (bytes long, 64-byte multiple not required) on the pool's
 * workers, best of `passes` (>= 1). For the DRAM bandwidth the buffer must be much larger than
 * the last-level cache (>= 4x). Returns 0 when bytes is 0. */
double membw_read_bytes_per_s(struct pool *pool, const void *buf, size_t bytes, int passes);

#endif
