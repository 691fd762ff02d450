/* envinfo/build.c: the `build` object of the environment: how this mlbench was built
 * (version, commit, compiler, build type and flags, AddressSanitizer). The only file compiled
 * with MLBENCH_BUILD_TYPE and MLBENCH_BUILD_FLAGS (src/CMakeLists.txt), so that changing the
 * flags rebuilds it alone. */
#include "result/envinfo/internal.h"

#include <stdio.h>
#include <string.h>

json_t *envinfo_build(void)
{
#if defined(__clang__)
    const char *compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    const char *compiler = "gcc " __VERSION__;
#else
    const char *compiler = "unknown";
#endif
#ifdef MLBENCH_BUILD_FLAGS
    const char *flags = *MLBENCH_BUILD_FLAGS ? MLBENCH_BUILD_FLAGS : "unknown";
#else
    const char *flags = "unknown";
#endif
#ifdef MLBENCH_BUILD_TYPE
    const char *type = *MLBENCH_BUILD_TYPE ? MLBENCH_BUILD_TYPE : "unknown";
#else
    const char *type = "unknown";
#endif
    bool asan = false;
#if defined(__SANITIZE_ADDRESS__)
    asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    asan = true;
#endif
#endif
    char comp[128];
    snprintf(comp, sizeof comp, "%s", compiler);
    for (size_t n = strlen(comp); n > 0 && comp[n - 1] == ' ';)
        comp[--n] = '\0';
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "version", MLBENCH_VERSION, "git_commit",
                     MLBENCH_GIT_COMMIT, "compiler", comp, "type", type, "flags", flags,
                     "address_sanitizer", asan);
}
