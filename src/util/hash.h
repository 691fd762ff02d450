/* hash: the hashes the harness's open-addressing tables use. Pure, thread-safe. */
#ifndef MLBENCH_HASH_H
#define MLBENCH_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a of s[0..len). */
static inline uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* A well-mixed hash of a (pid, tid) pair (Fibonacci hashing): take the bits you need from the
 * top, e.g. hash_thread(p, t) >> (64 - bits). */
static inline uint64_t hash_thread(int32_t pid, int32_t tid)
{
    uint64_t k = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
    return k * 0x9e3779b97f4a7c15ull;
}

#endif
