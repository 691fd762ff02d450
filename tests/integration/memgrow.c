/* memgrow: a test program whose resident memory grows with its argument and that fails above a
 * threshold the way real programs run out of memory, for the out-of-memory tests and
 * `mlbench sweep --find-max` ("finds it exactly").
 *
 *   memgrow MIB [--limit MIB] [--style python|enomem|rlimit] [--hold MS]
 *
 * Allocates MIB MiB and writes every page of it (so it is resident), holds it --hold ms
 * (default 100: long enough for a sampler to see the peak), prints "memgrow: touched N MiB" and
 * exits 0. With --limit L and MIB > L it fails instead, exit 1:
 *   python  (default) prints the end of a Python traceback, "MemoryError: Unable to allocate
 *           N MiB", without allocating;
 *   enomem  prints "memgrow: cannot allocate N MiB: Cannot allocate memory", without
 *           allocating;
 *   rlimit  caps its address space (RLIMIT_AS) at what it maps now plus L MiB and a half, so
 *           that the allocation really fails (malloc returns NULL), and prints strerror's words. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024L * 1024L)

static long parse(const char *what, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > 1L << 20) {
        fprintf(stderr, "memgrow: %s '%s' must be a whole number of MiB from 0 to %ld\n", what, s,
                1L << 20);
        exit(2);
    }
    return v;
}

/* The address space mapped now (VmSize), in bytes; -1 when unknown. */
static long vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

int main(int argc, char **argv)
{
    long mib = -1, limit = -1, hold_ms = 100;
    const char *style = "python";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--limit") && i + 1 < argc)
            limit = parse("--limit", argv[++i]);
        else if (!strcmp(argv[i], "--style") && i + 1 < argc)
            style = argv[++i];
        else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
            hold_ms = parse("--hold", argv[++i]);
        else if (mib < 0 && argv[i][0] != '-')
            mib = parse("MIB", argv[i]);
        else {
            fprintf(stderr, "usage: memgrow MIB [--limit MIB] [--style python|enomem|rlimit] "
                            "[--hold MS]\n");
            return 2;
        }
    }
    if (mib < 0 ||
        (strcmp(style, "python") && strcmp(style, "enomem") && strcmp(style, "rlimit"))) {
        fprintf(stderr, "memgrow: give MIB, and --style python, enomem or rlimit\n");
        return 2;
    }
    if (limit >= 0 && mib > limit) {
        if (!strcmp(style, "python")) {
            fprintf(stderr, "Traceback (most recent call last):\n  File \"memgrow.py\", line 1, "
                            "in <module>\nMemoryError: Unable to allocate %ld MiB\n", mib);
            return 1;
        }
        if (!strcmp(style, "enomem")) {
            fprintf(stderr, "memgrow: cannot allocate %ld MiB: %s\n", mib, strerror(ENOMEM));
            return 1;
        }
        long vm = vm_size();
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = (rlim_t)(vm + limit * MIB + MIB / 2);
        if (vm < 0 || setrlimit(RLIMIT_AS, &rl) != 0) {
            fprintf(stderr, "memgrow: cannot cap the address space: %s\n", strerror(errno));
            return 1;
        }
    }
    char *p = malloc(mib > 0 ? (size_t)(mib * MIB) : 1);
    if (!p) {
        fprintf(stderr, "memgrow: cannot allocate %ld MiB: %s\n", mib, strerror(errno));
        return 1;
    }
    long page = sysconf(_SC_PAGESIZE);
    for (long i = 0; i < mib * MIB; i += page)
        p[i] = (char)i;
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    printf("memgrow: touched %ld MiB\n", mib);
    free(p);
    return 0;
}
