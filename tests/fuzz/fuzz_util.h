/* fuzz_util: what the libFuzzer targets of tests/fuzz/ share: a private temporary directory,
 * writing an input to a file there, and splitting an input into NUL-terminated pieces. */
#ifndef MLBENCH_FUZZ_UTIL_H
#define MLBENCH_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A directory of this process's own, made on first use and kept for the process's life
 * (the run script runs each target in a temporary directory that it removes). */
static inline const char *fuzz_tmpdir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "fuzz-tmp-%ld-XXXXXX", (long)getpid());
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
    }
    return dir;
}

/* Writes data to dir/name (replacing it) and returns the path (static buffer). */
static inline const char *fuzz_write_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", fuzz_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}

/* Splits data at sep into at most max NUL-terminated pieces of one new buffer (free(*buf)).
 * Returns the count; v[count] is NULL. */
static inline int fuzz_split(const uint8_t *data, size_t size, char sep, char **v, int max,
                             char **buf)
{
    char *b = malloc(size + 1);
    if (!b)
        abort();
    memcpy(b, data, size);
    b[size] = '\0';
    int n = 0;
    char *p = b, *end = b + size;
    while (n < max) {
        char *q = memchr(p, sep, (size_t)(end - p));
        v[n++] = p;
        if (!q)
            break;
        *q = '\0';
        p = q + 1;
    }
    v[n] = NULL;
    *buf = b;
    return n;
}

#endif
