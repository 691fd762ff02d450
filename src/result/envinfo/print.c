/* envinfo/print.c: the environment as text for a terminal (`mlbench env`),
 * one aspect a line, from the JSON object alone: it may come from an old result, so any field
 * may be missing. */
#include "result/envinfo.h"

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/units.h"

/* An integer field, or -1. */
static int64_t jint_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}


/* A line being built: "a, b, c". */
struct line {
    char text[1024];
    size_t len;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct line *l, const char *fmt, ...)
{
    if (l->len >= sizeof l->text - 1)
        return;
    if (l->len > 0) {
        int w = snprintf(l->text + l->len, sizeof l->text - l->len, ", ");
        l->len += (size_t)w < sizeof l->text - l->len ? (size_t)w : sizeof l->text - l->len - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(l->text + l->len, sizeof l->text - l->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        l->len += (size_t)w < sizeof l->text - l->len ? (size_t)w : sizeof l->text - l->len - 1;
}

static void emit(FILE *out, const char *label, const struct line *l)
{
    fprintf(out, "%-13s%s\n", label, l->len ? l->text : "unknown");
}

static bool has_string(const json_t *array, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), s))
            return true;
    return false;
}

/* The reduced-precision arithmetic the CPU offers, by kind: the features of each kind it has
 * (x86 names, then ARM's), those MLBENCH_CPU_DISABLE removed marked so, and what
 * mlbench-workload does with avx512_bf16. */
static void print_precision(FILE *out, const json_t *feat, const json_t *disabled)
{
    static const struct {
        const char *kind, *features[4];
    } kinds[] = {
        {"bf16", {"avx512_bf16", "bf16", NULL}},
        {"fp16", {"avx512_fp16", "asimdhp", NULL}},
        {"int8", {"avx512_vnni", "avx_vnni", "asimddp", "i8mm"}},
        {"amx", {"amx_tile", "amx_bf16", "amx_int8", NULL}},
    };
    char buf[512];
    size_t len = 0;
#define PUT(...)                                                                            \
    do {                                                                                    \
        int w_ = snprintf(buf + len, sizeof buf - len, __VA_ARGS__);                        \
        len += w_ > 0 && (size_t)w_ < sizeof buf - len ? (size_t)w_ : 0;                    \
    } while (0)
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        PUT("%s%s:", k ? "; " : "", kinds[k].kind);
        bool any = false;
        for (size_t i = 0; i < 4 && kinds[k].features[i]; i++) {
            const char *f = kinds[k].features[i];
            bool on = has_string(feat, f), off = has_string(disabled, f);
            if (!on && !off)
                continue;
            any = true;
            PUT(" %s", f);
            if (off)
                PUT(" (disabled by MLBENCH_CPU_DISABLE)");
            else if (!strcmp(f, "avx512_bf16"))
                PUT(" (CPU training with --precision bf16)");
        }
        if (!any)
            PUT(" none");
    }
#undef PUT
    struct line l = {.len = 0};
    add(&l, "%s", buf);
    emit(out, "  precision", &l);
}

static void print_cpu(FILE *out, const json_t *env)
{
    const json_t *cpu = json_object_get(env, "cpu");
    struct line l = {.len = 0};
    if (jsonx_str(cpu, "model"))
        add(&l, "%s", jsonx_str(cpu, "model"));
    int64_t v;
    if ((v = jint_of(cpu, "sockets")) > 0)
        add(&l, "%lld socket%s", (long long)v, v == 1 ? "" : "s");
    if ((v = jint_of(cpu, "cores")) > 0)
        add(&l, "%lld cores", (long long)v);
    if ((v = jint_of(cpu, "threads")) > 0)
        add(&l, "%lld threads", (long long)v);
    if ((v = jint_of(env, "cpus_online")) > 0)
        add(&l, "%lld online", (long long)v);
    if ((v = jint_of(env, "cpus_allowed")) > 0)
        add(&l, "%lld allowed to mlbench", (long long)v);
    emit(out, "cpu", &l);

    l.len = 0;
    const json_t *caches = json_object_get(cpu, "caches"), *c;
    size_t i;
    json_array_foreach(caches, i, c) {
        char size[32] = "?";
        if (jint_of(c, "size_bytes") > 0)
            units_bytes((double)jint_of(c, "size_bytes"), size, sizeof size);
        if (jint_of(c, "shared_by_cpus") > 1)
            add(&l, "%s %s (shared by %lld)", jsonx_str(c, "name") ? jsonx_str(c, "name") : "?", size,
                (long long)jint_of(c, "shared_by_cpus"));
        else
            add(&l, "%s %s", jsonx_str(c, "name") ? jsonx_str(c, "name") : "?", size);
    }
    emit(out, "  caches", &l);

    l.len = 0;
    if (jsonx_str(cpu, "governor"))
        add(&l, "governor %s", jsonx_str(cpu, "governor"));
    if (jsonx_str(cpu, "energy_performance_preference"))
        add(&l, "energy preference %s", jsonx_str(cpu, "energy_performance_preference"));
    double lo = jsonx_num(cpu, "min_mhz"), hi = jsonx_num(cpu, "max_mhz");
    if (isfinite(lo) && isfinite(hi))
        add(&l, "%.0f-%.0f MHz", lo, hi);
    lo = jsonx_num(cpu, "scaling_min_mhz");
    hi = jsonx_num(cpu, "scaling_max_mhz");
    if (isfinite(lo) && isfinite(hi))
        add(&l, "allowed %.0f-%.0f MHz", lo, hi);
    const json_t *boost = json_object_get(cpu, "boost");
    if (json_is_boolean(boost))
        add(&l, "boost %s", json_is_true(boost) ? "on" : "off");
    if (jsonx_str(cpu, "frequency_driver"))
        add(&l, "driver %s", jsonx_str(cpu, "frequency_driver"));
    if (!l.len)
        add(&l, "unknown (no cpufreq in /sys: usual in virtual machines)");
    emit(out, "  frequency", &l);

    const json_t *feat = json_object_get(cpu, "features");
    if (json_is_array(feat)) {
        l.len = 0;
        char buf[1024] = "";
        size_t len = 0;
        json_array_foreach(feat, i, c) {
            int w = snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "",
                             json_string_value(c) ? json_string_value(c) : "?");
            if (w < 0 || (size_t)w >= sizeof buf - len)
                break;
            len += (size_t)w;
        }
        add(&l, "%s", len ? buf : "none of those ML libraries look for");
        emit(out, "  features", &l);
        print_precision(out, feat, json_object_get(cpu, "features_disabled"));
    }
}

static void print_blas(FILE *out, const json_t *env)
{
    const json_t *blas = json_object_get(env, "blas");
    struct line l = {.len = 0};
    if (jsonx_str(blas, "provider"))
        add(&l, "%s (%s)", jsonx_str(blas, "provider"), jsonx_str(blas, "library") ? jsonx_str(blas, "library") : "?");
    if (jint_of(blas, "threads") > 0)
        add(&l, "%lld thread%s (%s)", (long long)jint_of(blas, "threads"),
            jint_of(blas, "threads") == 1 ? "" : "s",
            jsonx_str(blas, "threads_from") ? jsonx_str(blas, "threads_from") : "?");
    if (!l.len)
        add(&l, "no libblas.so.3 alternative found");
    emit(out, "blas", &l);
    if (jsonx_str(blas, "openblas_library")) {
        l.len = 0;
        add(&l, "%s (%s)", jsonx_str(blas, "openblas_provider") ? jsonx_str(blas, "openblas_provider") : "?",
            jsonx_str(blas, "openblas_library"));
        if (jint_of(blas, "openblas_threads") > 0)
            add(&l, "%lld thread%s (%s)", (long long)jint_of(blas, "openblas_threads"),
                jint_of(blas, "openblas_threads") == 1 ? "" : "s",
                jsonx_str(blas, "openblas_threads_from") ? jsonx_str(blas, "openblas_threads_from") : "?");
        emit(out, "  openblas", &l);
    }
    l.len = 0;
    add(&l, "%s", jsonx_str(blas, "openblas_coretype") ? jsonx_str(blas, "openblas_coretype")
                                                  : "not set (OpenBLAS detects the CPU)");
    emit(out, "  coretype", &l);
}

static void print_gpus(FILE *out, const json_t *env)
{
    const json_t *gpus = json_object_get(env, "gpus"), *g;
    size_t i;
    if (!json_array_size(gpus)) {
        struct line l = {.len = 0};
        add(&l, "none%s%s", jsonx_str(env, "gpu_error") ? ": " : "",
            jsonx_str(env, "gpu_error") ? jsonx_str(env, "gpu_error") : "");
        emit(out, "gpus", &l);
        return;
    }
    json_array_foreach(gpus, i, g) {
        struct line l = {.len = 0};
        char label[32];
        snprintf(label, sizeof label, "gpu %lld", (long long)jint_of(g, "index"));
        add(&l, "%s", jsonx_str(g, "name") ? jsonx_str(g, "name") : "unnamed");
        if (jint_of(g, "memory_bytes") > 0) {
            char size[32];
            add(&l, "%s", units_bytes((double)jint_of(g, "memory_bytes"), size, sizeof size));
        }
        if (jsonx_str(g, "compute_capability"))
            add(&l, "compute capability %s", jsonx_str(g, "compute_capability"));
        if (jsonx_str(g, "uuid"))
            add(&l, "%s", jsonx_str(g, "uuid"));
        if (json_is_false(json_object_get(g, "usable")))
            add(&l, "not usable (NVML gave no handle)");
        emit(out, label, &l);
    }
    struct line l = {.len = 0};
    if (jsonx_str(env, "gpu_driver"))
        add(&l, "%s", jsonx_str(env, "gpu_driver"));
    emit(out, "  driver", &l);
}

/* The mlbench that wrote the result: version, compiler, build type and flags. */
static void print_build(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    const json_t *build = json_object_get(env, "build");
    if (jsonx_str(build, "version"))
        add(&l, "%s (%s)", jsonx_str(build, "version"),
            jsonx_str(build, "git_commit") ? jsonx_str(build, "git_commit") : "?");
    if (jsonx_str(build, "compiler"))
        add(&l, "%s", jsonx_str(build, "compiler"));
    if (jsonx_str(build, "type"))
        add(&l, "build %s", jsonx_str(build, "type"));
    if (json_is_true(json_object_get(build, "address_sanitizer")))
        add(&l, "with AddressSanitizer (slower)");
    emit(out, "mlbench", &l);
    if (jsonx_str(build, "flags")) {
        l.len = 0;
        add(&l, "%s", jsonx_str(build, "flags"));
        emit(out, "  flags", &l);
    }
}

/* The host name, then the operating system, kernel, machine and libc. */
static void print_host(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    if (jsonx_str(env, "hostname"))
        add(&l, "%s", jsonx_str(env, "hostname"));
    emit(out, "host", &l);

    l.len = 0;
    const json_t *os = json_object_get(env, "os");
    const char *osname = jsonx_str(os, "pretty_name") ? jsonx_str(os, "pretty_name") : jsonx_str(os, "name");
    if (osname)
        add(&l, "%s", osname);
    if (jsonx_str(env, "kernel"))
        add(&l, "%s", jsonx_str(env, "kernel"));
    if (jsonx_str(env, "machine"))
        add(&l, "%s", jsonx_str(env, "machine"));
    const json_t *libc = json_object_get(env, "libc");
    if (jsonx_str(libc, "version"))
        add(&l, "%s %s", jsonx_str(libc, "name") ? jsonx_str(libc, "name") : "libc", jsonx_str(libc, "version"));
    emit(out, "os", &l);
}

/* Memory, swap, hugepages, NUMA nodes; then the cgroup's limits when there are any. */
static void print_memory(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    char size[32];
    const json_t *mem = json_object_get(env, "memory");
    if (jint_of(mem, "total_bytes") >= 0)
        add(&l, "%s", units_bytes((double)jint_of(mem, "total_bytes"), size, sizeof size));
    if (jint_of(mem, "swap_bytes") >= 0)
        add(&l, "swap %s", units_bytes((double)jint_of(mem, "swap_bytes"), size, sizeof size));
    if (jsonx_str(mem, "transparent_hugepages"))
        add(&l, "transparent hugepages %s", jsonx_str(mem, "transparent_hugepages"));
    if (jint_of(mem, "numa_nodes") > 0)
        add(&l, "%lld NUMA node%s", (long long)jint_of(mem, "numa_nodes"),
            jint_of(mem, "numa_nodes") == 1 ? "" : "s");
    emit(out, "memory", &l);

    const json_t *cg = json_object_get(env, "cgroup");
    if (json_object_size(cg)) {
        l.len = 0;
        if (isfinite(jsonx_num(cg, "cpu_limit_cores")))
            add(&l, "%.2f CPUs", jsonx_num(cg, "cpu_limit_cores"));
        if (jint_of(cg, "memory_limit_bytes") > 0)
            add(&l, "%s memory",
                units_bytes((double)jint_of(cg, "memory_limit_bytes"), size, sizeof size));
        emit(out, "cgroup limit", &l);
    }
}

/* Container or virtual machine, with the evidence. */
static void print_virtual(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    const json_t *virt = json_object_get(env, "virtualization");
    if (jsonx_str(virt, "container"))
        add(&l, "container %s", jsonx_str(virt, "container"));
    if (jsonx_str(virt, "vm"))
        add(&l, "virtual machine %s", jsonx_str(virt, "vm"));
    const json_t *ev = json_object_get(virt, "evidence"), *e;
    size_t i;
    char because[512] = "";
    json_array_foreach(ev, i, e) {
        size_t used = strlen(because);
        if (json_string_value(e))
            snprintf(because + used, sizeof because - used, "%s%s", used ? "; " : "",
                     json_string_value(e));
    }
    if (because[0])
        add(&l, "evidence: %s", because);
    emit(out, "virtual", &l);
}

/* The git work tree mlbench ran in: commit, branch, dirty or clean. */
static void print_git(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    const json_t *git = json_object_get(env, "git");
    if (jsonx_str(git, "commit")) {
        add(&l, "%.12s%s%s", jsonx_str(git, "commit"), jsonx_str(git, "branch") ? " on " : "",
            jsonx_str(git, "branch") ? jsonx_str(git, "branch") : "");
        if (json_is_true(json_object_get(git, "dirty")))
            add(&l, "dirty: %lld tracked file%s changed", (long long)jint_of(git, "changed_files"),
                jint_of(git, "changed_files") == 1 ? "" : "s");
        else
            add(&l, "clean");
    } else {
        add(&l, "not a git work tree");
    }
    emit(out, "git", &l);
}

/* "3.11.2 (/usr/bin/python3), torch 1.13.0a0, numpy 1.24.2", or nothing without Python. */
static void print_python(FILE *out, const json_t *env)
{
    const json_t *py = json_object_get(env, "python");
    if (!json_is_object(py))
        return;
    struct line l = {.len = 0};
    add(&l, "%s", jsonx_str(py, "version") ? jsonx_str(py, "version") : "?");
    if (jsonx_str(py, "executable"))
        l.len += (size_t)snprintf(l.text + l.len, sizeof l.text - l.len, " (%s)",
                                  jsonx_str(py, "executable"));
    if (l.len >= sizeof l.text)
        l.len = sizeof l.text - 1;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(py, "packages"), name, v)
        if (json_is_string(v))
            add(&l, "%s %s", name, json_string_value(v));
    if (!json_object_size(json_object_get(py, "packages")))
        add(&l, "no torch or numpy");
    emit(out, "python", &l);
}

/* The environment variables that change ML performance, one a line. */
static void print_variables(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    size_t i;
    const json_t *vars = json_object_get(env, "variables"), *v;
    if (!json_array_size(vars)) {
        l.len = 0;
        add(&l, "none of those that change ML performance");
        emit(out, "variables", &l);
    }
    json_array_foreach(vars, i, v) {
        fprintf(out, "%-13s%s=%s\n", i == 0 ? "variables" : "", jsonx_str(v, "name") ? jsonx_str(v, "name") : "?",
                jsonx_str(v, "value") ? jsonx_str(v, "value") : "");
    }
}

void envinfo_print(FILE *out, const json_t *env)
{
    print_build(out, env);
    print_host(out, env);
    print_cpu(out, env);
    print_memory(out, env);
    print_blas(out, env);
    print_gpus(out, env);
    print_virtual(out, env);
    print_git(out, env);
    print_python(out, env);
    print_variables(out, env);
}
