/* envinfo/internal.h: what the pieces of the environment capture share (private to
 * src/result/envinfo/; callers include result/envinfo.h). File reading relative to a root
 * directory (tests point it at a fake tree), the JSON setters that leave unknown facts out, and
 * the one function per aspect that capture.c assembles. */
#ifndef MLBENCH_ENVINFO_INTERNAL_H
#define MLBENCH_ENVINFO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "result/envinfo.h"

/* ---- read.c: files and fields */

/* The whole file ROOT/path as a NUL-terminated string owned by the caller, or NULL. */
char *envinfo_read_file(const char *root, const char *path);
/* The first line of ROOT/path, without surrounding white space, into buf. False when the file
 * could not be read or that line is empty. */
bool envinfo_read_line(const char *root, const char *path, char *buf, size_t len);
/* A whole number read from ROOT/path, or -1. */
int64_t envinfo_read_int(const char *root, const char *path);
/* Sets key to s when s is a non-empty string; bytes that are not UTF-8 become '?'. */
void envinfo_set_text(json_t *o, const char *key, const char *s);
/* s (NULL: "") as envinfo_set_text records it, into buf[len]: a typed fact that reads as the
 * environment writes it. */
void envinfo_copy_text(char *buf, size_t len, const char *s);
/* Sets key to v when v >= 0. */
void envinfo_set_int(json_t *o, const char *key, int64_t v);
/* The value of NAME in envp (as environ), or NULL. */
const char *envinfo_getenv(char *const *envp, const char *name);

/* ---- cpu.c */

/* Instruction set extensions looked for in cpuinfo (ml_features in cpu.c). */
#define ENVINFO_N_FEATURES 23

/* What /proc/cpuinfo tells; -1 / "" where it does not. */
struct cpuinfo_facts {
    char vendor[64], model[160];
    long implementer, part; /* ARM */
    int threads, sockets, cores;
    bool has_flags;         /* an x86 "flags" line: the hypervisor bit is known */
    bool hypervisor;        /* that line has "hypervisor": running under a hypervisor */
    bool feature[ENVINFO_N_FEATURES];          /* present and not disabled */
    bool feature_disabled[ENVINFO_N_FEATURES]; /* present, but MLBENCH_CPU_DISABLE names it */
};

/* The `cpu` object (cpuinfo, sysfs topology, caches, frequency policy), its features less
 * those MLBENCH_CPU_DISABLE of envp names; *f gets the cpuinfo facts the other aspects need
 * (cores for BLAS, the hypervisor bit). */
json_t *envinfo_cpu(const char *root, char *const *envp, struct cpuinfo_facts *f);
/* The CPU's model and extensions of f, as the `cpu` object records them, into m. */
void envinfo_cpu_machine_facts(const struct cpuinfo_facts *f, struct machine_facts *m);
/* CPUs this process may run on (sched_getaffinity), or -1. */
int envinfo_cpus_allowed(void);

/* ---- limits.c */

/* The `memory` object: size, swap, transparent hugepages, NUMA nodes. */
json_t *envinfo_memory(const char *root);
/* The `cgroup` object: CPU and memory limits of this process's cgroup (v2, or v1). */
json_t *envinfo_cgroup(const char *root, struct machine_facts *m);

/* ---- blas.c */

/* The `blas` object: the BLAS, LAPACK and OpenBLAS libraries the Debian alternatives select
 * and the threads they would start. machine: uname's (picks the native alternative; may be
 * NULL); cpus: CPUs allowed; cores: physical cores (<= 0: unknown). */
json_t *envinfo_blas(const char *root, const char *machine, char *const *envp, int cpus,
                     int cores);

/* ---- virt.c */

/* The `virtualization` object: container, virtual machine and the evidence for each; the
 * container and the virtual machine also into m->container and m->vm. */
json_t *envinfo_virtualization(const char *root, const struct cpuinfo_facts *cpu,
                               char *const *envp, const char *kernel_release,
                               struct machine_facts *m);

/* ---- git.c */

/* Runs argv[0] (looked up in PATH when it has no '/') with argv, no shell, stdin and stderr on
 * /dev/null, until deadline (mono_ns of util/clock.h); its stdout goes into out (truncated,
 * NUL-terminated) and *lines counts its lines. Returns 0 when it exited 0, -1 otherwise
 * (missing, failed, or killed at the deadline). */
int envinfo_run(char *const argv[], char *const envp[], char *out, size_t outlen, size_t *lines,
                int64_t deadline);

/* ---- python.c */

/* The `python` object: the interpreter's version and executable, and the versions of the
 * packages the rules care about (torch, numpy) as the interpreter would import them, read from
 * their metadata files without importing them. python: the interpreter (NULL: python3 from
 * PATH, or ROOT/usr/bin/python3 when root is set). NULL when it cannot be run. */
json_t *envinfo_python(const char *root, const char *python, char *const *envp);

/* ---- build.c */

/* The `build` object: version, commit, compiler, build type and flags, AddressSanitizer. */
json_t *envinfo_build(void);

#endif
