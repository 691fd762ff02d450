/* cuda_backend: loads libmlbench_wl_cuda.so with dlopen (see cuda_backend.h). */
#include "common/cuda_backend.h"

#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct cuda_backend *cuda_backend_load(char *err, size_t errlen)
{
    char path[4096];
    const char *env = getenv("MLBENCH_CUDA_BACKEND");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        char *self = realpath("/proc/self/exe", NULL);
        if (!self) {
            snprintf(err, errlen, "cannot find this executable's directory (/proc/self/exe)");
            return NULL;
        }
        /* beside the binary in the build tree, else installed in lib/mlbench/ */
        const char *dir = dirname(self);
        char installed[4096];
        snprintf(path, sizeof path, "%s/libmlbench_wl_cuda.so", dir);
        snprintf(installed, sizeof installed, "%s/%s/libmlbench_wl_cuda.so", dir,
                 MLBENCH_PKGLIBDIR_FROM_BINDIR);
        free(self);
        if (access(path, F_OK) != 0 && access(installed, F_OK) == 0)
            snprintf(path, sizeof path, "%s", installed);
        else if (access(path, F_OK) != 0) {
            snprintf(err, errlen, "this build has no CUDA backend (%s is missing): build on a "
                     "machine with the CUDA toolkit (nvcc), or install the mlbench-cuda package, "
                     "or use --device cpu", installed);
            return NULL;
        }
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, errlen, "cannot load the CUDA backend: %s (is the CUDA runtime's cuBLAS "
                 "on the library path?)", dlerror());
        return NULL;
    }
    const struct cuda_backend *(*get)(void);
    *(void **)&get = dlsym(lib, CUDA_BACKEND_SYMBOL);
    const struct cuda_backend *b = get ? get() : NULL;
    if (!b || b->abi != CUDA_BACKEND_ABI) {
        snprintf(err, errlen, "%s is not a CUDA backend of this mlbench-workload (ABI %d, "
                 "expected %d): rebuild it", path, b ? b->abi : -1, CUDA_BACKEND_ABI);
        dlclose(lib);
        return NULL;
    }
    return b;
}
