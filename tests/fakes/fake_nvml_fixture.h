/* fake_nvml_fixture: what the unit tests of the nvml source (tests/unit/test_source_nvml*.c)
 * share: the source opened on the fake NVML (fake_nvml.c) under a script the test writes, ticks
 * into a sample table, and checks on the values. The fakes are found through the compile
 * definitions FAKE_NVML_PATH and FAKE_NVML_MINIMAL_PATH (set by tests/fakes/CMakeLists.txt), or
 * the environment variables of the same names, which win; without them the tests that need a
 * fake are skipped. Header-only; include after <cmocka.h>. */
#ifndef MLBENCH_FAKE_NVML_FIXTURE_H
#define MLBENCH_FAKE_NVML_FIXTURE_H

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/facts.h"
#include "sources/sources.h"

#define FAKE_NVML_TICK_NS 100000000LL /* 100 ms */

/* One nvml source opened on a scripted fake, with a table to sample into. */
struct fixture {
    char script[64];
    void *fake; /* the test's own reference to the fake, to read its call counts */
    unsigned long (*calls)(const char *name);
    struct series_registry reg;
    struct sample_table tab;
    struct sample_ctx ctx;
    pid_t tree[4];
    void *state;
    bool open;
    uint64_t errors;
    char err[512];
};

static inline const char *fake_path(bool minimal)
{
    const char *env = getenv(minimal ? "FAKE_NVML_MINIMAL_PATH" : "FAKE_NVML_PATH");
    if (env && *env)
        return env;
#if defined(FAKE_NVML_PATH) && defined(FAKE_NVML_MINIMAL_PATH)
    return minimal ? FAKE_NVML_MINIMAL_PATH : FAKE_NVML_PATH;
#else
    return NULL;
#endif
}

static inline int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    snprintf(fx->script, sizeof fx->script, "/tmp/test_source_nvml.XXXXXX");
    int fd = mkstemp(fx->script);
    assert_true(fd >= 0);
    close(fd);
    fx->ctx.tree = fx->tree;
    fx->ctx.cap_tree = sizeof fx->tree / sizeof fx->tree[0];
    assert_int_equal(setenv("FAKE_NVML_SCRIPT", fx->script, 1), 0);
    *state = fx;
    return 0;
}

static inline int teardown(void **state)
{
    struct fixture *fx = *state;
    if (fx->open) {
        sample_table_free(&fx->tab);
        nvml_source.close(fx->state);
    }
    series_registry_free(&fx->reg);
    if (fx->fake)
        dlclose(fx->fake);
    unlink(fx->script);
    unsetenv("MLBENCH_NVML_LIBRARY");
    unsetenv("FAKE_NVML_SCRIPT");
    free(fx);
    return 0;
}

/* Loads the fake (minimal: the variant without the newer functions) under the test's script
 * and points the source at it. Skips the test when the fake's path is not known. */
static inline void use_fake(struct fixture *fx, bool minimal, const char *script)
{
    const char *path = fake_path(minimal);
    if (!path)
        skip();
    FILE *f = fopen(fx->script, "w");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    /* The same path gives the same loaded library: the one the source will dlopen. */
    fx->fake = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!fx->fake)
        fail_msg("cannot load the fake NVML %s: %s", path, dlerror());
    fx->calls = (unsigned long (*)(const char *))dlsym(fx->fake, "fake_nvml_calls");
    assert_non_null(fx->calls);
    assert_int_equal(setenv("MLBENCH_NVML_LIBRARY", path, 1), 0);
}

/* Opens the source; on success the table is ready for ticks. Returns what open returned. */
static inline int open_source(struct fixture *fx)
{
    fx->err[0] = '\0';
    int rc = nvml_source.open(&fx->reg, &fx->ctx, &fx->state, fx->err, sizeof fx->err);
    if (rc == 0) {
        fx->open = true;
        sample_table_init(&fx->tab, &fx->reg);
        if (nvml_source.run_start)
            nvml_source.run_start(fx->state);
    }
    return rc;
}

static inline void close_source(struct fixture *fx)
{
    assert_true(fx->open);
    sample_table_free(&fx->tab);
    nvml_source.close(fx->state);
    fx->open = false;
}

/* One tick stamped t_ns (CLOCK_MONOTONIC in the sampler): the new row's index. */
static inline size_t tick_at(struct fixture *fx, int64_t t_ns)
{
    size_t row = sample_table_add_row(&fx->tab, t_ns);
    nvml_source.sample(fx->state, &fx->ctx, &fx->tab, row, &fx->errors);
    return row;
}

/* One tick, the rows stamped FAKE_NVML_TICK_NS apart (the sampler's default interval). */
static inline size_t tick(struct fixture *fx)
{
    return tick_at(fx, (int64_t)fx->tab.n * FAKE_NVML_TICK_NS);
}

/* Series name{gpu="gpu"} at row; fails the test when there is no such series. */
static inline double value(const struct fixture *fx, const char *name, int gpu, size_t row)
{
    char labels[32];
    snprintf(labels, sizeof labels, "gpu=\"%d\"", gpu);
    long col = sample_table_find(&fx->tab, name, labels);
    if (col < 0)
        fail_msg("no series %s{%s}", name, labels);
    return fx->tab.v[col][row];
}

#define assert_value(fx, name, gpu, row, expected)                                             \
    do {                                                                                       \
        double got_ = value(fx, name, gpu, row), want_ = (expected);                           \
        if (!(got_ == want_))                                                                  \
            fail_msg("%s{gpu=\"%d\"} at row %zu = %.17g, expected %.17g", name, gpu,           \
                     (size_t)(row), got_, want_);                                              \
    } while (0)

#define assert_nan(fx, name, gpu, row)                                                         \
    do {                                                                                       \
        double got_ = value(fx, name, gpu, row);                                               \
        if (!isnan(got_))                                                                      \
            fail_msg("%s{gpu=\"%d\"} at row %zu = %.17g, expected NAN", name, gpu,             \
                     (size_t)(row), got_);                                                     \
    } while (0)

#define assert_contains(haystack, needle)                                                      \
    do {                                                                                       \
        if (!strstr((haystack), (needle)))                                                     \
            fail_msg("\"%s\" does not contain \"%s\"", (haystack), (needle));                  \
    } while (0)

/* The static facts of the open source (its facts op); source_facts_free them. */
static inline struct source_facts source_facts_of(const struct fixture *fx)
{
    struct source_facts f = {.n_gpus = 0};
    nvml_source.facts(fx->state, &f);
    return f;
}

#endif
