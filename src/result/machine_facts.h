/* machine_facts: what a run ran on, as typed values: its GPUs (the metric sources' facts), the
 * CPU's model and ML instruction set extensions, the host name and the container and virtual
 * machine verdict. The environment capture (envinfo_capture) fills them from the values it
 * reads and writes the environment document from the same values; the summary (each GPU's
 * maximum SM clock), the analysis (the GPU's name and tensor cores, the CPU's bf16
 * instructions) and the price (the machine's names) read them, never the document. Texts are
 * as the environment records them (UTF-8: bytes that are not become '?'), "" when unknown. */
#ifndef MLBENCH_MACHINE_FACTS_H
#define MLBENCH_MACHINE_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/facts.h"

#define MACHINE_MAX_CPU_FEATURES 32 /* more than the extensions the capture looks for */

struct machine_facts {
    char hostname[256];
    char cpu_model[160];             /* "Intel(R) Xeon(R) Platinum 8480+", "Neoverse-V2" */
    /* The ML-relevant instruction set extensions present and not disabled
     * (MLBENCH_CPU_DISABLE), as /proc/cpuinfo names them ("avx512_bf16"), in the order of the
     * environment's cpu.features; static strings */
    const char *cpu_features[MACHINE_MAX_CPU_FEATURES];
    size_t n_cpu_features;
    char container[256];             /* "none", "docker", "kubernetes" ...; "" not captured */
    char vm[64];                     /* "none", "kvm", "unknown" ...; "" not captured */
    bool cgroup_captured;            /* the cgroup's limits were read (cpu_limit_cores holds) */
    double cpu_limit_cores;          /* the cgroup's CPU quota in cores (cpu.max); 0: none */
    struct source_facts sources;     /* the GPUs and their driver; owned */
};

/* True when the CPU has the extension feature ("amx_bf16"): it is in m->cpu_features. False
 * when m is NULL. */
bool machine_facts_cpu_has(const struct machine_facts *m, const char *feature);

/* A deep copy of src into dst (whose former contents are not freed). */
void machine_facts_copy(struct machine_facts *dst, const struct machine_facts *src);

/* Frees what m owns and zeroes it; m may be NULL. */
void machine_facts_free(struct machine_facts *m);

#endif
