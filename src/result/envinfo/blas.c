/* envinfo/blas.c: the `blas` object of the environment: the BLAS, LAPACK and OpenBLAS
 * libraries the Debian alternatives make a workload load, the name envinfo gives each
 * ("openblas-pthread", "mkl", "reference" ...) and the threads it would start by its own rules
 * given the variables, CPUs and cores. */
#include "result/envinfo/internal.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Target of the Debian alternative NAME-<multiarch> (e.g. libblas.so.3-x86_64-linux-gnu), the
 * library a program linked with NAME loads; the native architecture's when there are several. */
static bool alternative(const char *root, const char *name, const char *machine, char *out,
                        size_t len)
{
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s/etc/alternatives/%s-*", root, name);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return false;
    const char *pick = g.gl_pathv[0];
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (machine && *machine && strstr(g.gl_pathv[i] + strlen(pattern) - 1, machine))
            pick = g.gl_pathv[i];
    ssize_t n = readlink(pick, out, len - 1);
    globfree(&g);
    if (n <= 0)
        return false;
    out[n] = '\0';
    return true;
}

/* The name envinfo gives the library at path: its Debian directory ("openblas-pthread",
 * "blis-openmp", "atlas"; "blas" is the reference implementation), or "mkl". */
static void blas_provider(const char *path, char *out, size_t len)
{
    const char *file = strrchr(path, '/');
    file = file ? file + 1 : path;
    if (strstr(file, "mkl")) {
        snprintf(out, len, "mkl");
        return;
    }
    const char *end = file > path ? file - 1 : path;
    const char *start = end;
    while (start > path && start[-1] != '/')
        start--;
    size_t n = (size_t)(end - start);
    if (n == 0 || memmem(start, n, "-linux-", 7)) { /* directly in the multiarch directory */
        size_t fl = strcspn(file, ".");
        if (fl > 3 && !strncmp(file, "lib", 3))
            snprintf(out, len, "%.*s", (int)(fl - 3), file + 3);
        else
            snprintf(out, len, "%.*s", (int)fl, file);
    } else if ((n == 4 && !strncmp(start, "blas", 4)) || (n == 6 && !strncmp(start, "lapack", 6))) {
        snprintf(out, len, "reference");
    } else {
        snprintf(out, len, "%.*s", (int)n, start);
    }
}

/* A thread-count variable: its leading whole number when > 0 (OMP_NUM_THREADS may be a list
 * "8,4": the first level counts), or -1 when unset or not a count (libraries ignore it then). */
static int thread_var(char *const *envp, const char *name)
{
    const char *v = envinfo_getenv(envp, name);
    if (!v)
        return -1;
    while (isspace((unsigned char)*v))
        v++;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || n <= 0 || n > 1000000 || (*end && *end != ',' && !isspace((unsigned char)*end)))
        return -1;
    return (int)n;
}

int envinfo_blas_threads(const char *provider, char *const *envp, int cpus, int cores,
                         const char **from)
{
    static const char *const openblas_vars[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                "OMP_NUM_THREADS", NULL};
    static const char *const omp_vars[] = {"OMP_NUM_THREADS", NULL};
    static const char *const mkl_vars[] = {"MKL_NUM_THREADS", "OMP_NUM_THREADS", NULL};
    static const char *const blis_vars[] = {"BLIS_NUM_THREADS", "OMP_NUM_THREADS", NULL};
    const char *const *vars;
    int fallback;
    const char *fallback_from;
    *from = NULL;
    if (!provider)
        return -1;
    if (!strcmp(provider, "reference") || strstr(provider, "serial")) {
        *from = "single-threaded library";
        return 1;
    }
    if (!strncmp(provider, "openblas", 8)) {
        /* an OpenMP build ignores OPENBLAS_NUM_THREADS and GOTO_NUM_THREADS (OpenBLAS README) */
        vars = strstr(provider, "openmp") ? omp_vars : openblas_vars;
        fallback = cpus;
        fallback_from = "cpus";
    } else if (!strcmp(provider, "mkl")) {
        vars = mkl_vars;
        fallback = cores > 0 ? cores : cpus;
        fallback_from = cores > 0 ? "cores" : "cpus";
    } else if (!strncmp(provider, "blis", 4)) {
        vars = blis_vars;
        fallback = 1; /* BLIS is single-threaded unless told */
        fallback_from = "default";
    } else {
        return -1;
    }
    for (size_t i = 0; vars[i]; i++) {
        int n = thread_var(envp, vars[i]);
        if (n > 0) {
            *from = vars[i];
            return n;
        }
    }
    if (fallback <= 0)
        return -1;
    *from = fallback_from;
    return fallback;
}

/* Records the library name (NAME-<multiarch> alternative) resolves to, under the keys
 * PREFIXlibrary, PREFIXprovider, PREFIXthreads and PREFIXthreads_from. */
static void blas_library(json_t *o, const char *prefix, const char *root, const char *name,
                         const char *machine, char *const *envp, int cpus, int cores)
{
    char path[PATH_MAX], provider[64], key[64];
    if (!alternative(root, name, machine, path, sizeof path))
        return;
    snprintf(key, sizeof key, "%slibrary", prefix);
    envinfo_set_text(o, key, path);
    blas_provider(path, provider, sizeof provider);
    snprintf(key, sizeof key, "%sprovider", prefix);
    envinfo_set_text(o, key, provider);
    const char *from;
    int n = envinfo_blas_threads(provider, envp, cpus, cores, &from);
    if (n > 0) {
        snprintf(key, sizeof key, "%sthreads", prefix);
        envinfo_set_int(o, key, n);
        snprintf(key, sizeof key, "%sthreads_from", prefix);
        envinfo_set_text(o, key, from);
    }
}

json_t *envinfo_blas(const char *root, const char *machine, char *const *envp, int cpus,
                         int cores)
{
    json_t *o = json_object();
    blas_library(o, "", root, "libblas.so.3", machine, envp, cpus, cores);
    char path[PATH_MAX];
    if (alternative(root, "liblapack.so.3", machine, path, sizeof path))
        envinfo_set_text(o, "lapack_library", path);
    blas_library(o, "openblas_", root, "libopenblas.so.0", machine, envp, cpus, cores);
    envinfo_set_text(o, "openblas_coretype", envinfo_getenv(envp, "OPENBLAS_CORETYPE"));
    return o;
}
