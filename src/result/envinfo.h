/* envinfo: what a measurement ran on, captured as one JSON object: CPU (model, topology,
 * caches, frequency policy), memory, kernel, distribution, libc, how mlbench was built, the BLAS
 * a workload would load and its thread count, GPUs (the nvml source's facts), container or virtual
 * machine, the environment variables that change ML performance, and the git state of the
 * working directory. It is the `environment` of every result and the output of `mlbench env`;
 * docs/environment.md describes every field and where it comes from.
 *
 * A fact that could not be read is left out, never written as 0 or "": readers must tolerate
 * any optional field missing. The capture also hands the facts that a run's summary, analysis
 * and price need to them as C values (result/machine_facts.h): during a run the document is
 * only written, never read back. The capture reads files under /proc, /sys and /etc, runs git
 * (when asked, at most 2 s) and makes no network access. */
#ifndef MLBENCH_ENVINFO_H
#define MLBENCH_ENVINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "result/machine_facts.h"

struct envinfo_options {
    /* Prefix of every file read (/proc/cpuinfo becomes ROOT/proc/cpuinfo): tests point it at a
     * fake tree. NULL or "": the machine itself. Host name, kernel (uname), CPUs online and the
     * CPU affinity always describe the machine. */
    const char *root;
    /* Directory whose git commit and dirty state are recorded. NULL: the current directory. */
    const char *git_dir;
    bool no_git; /* do not run git: no `git` object */
    /* The static facts of the metric sources, as sampler_facts (mlbench run, whose sampler
     * has them open) or sampler_source_facts (mlbench env) give them: gpus and gpu_driver.
     * NULL: no GPU facts. Borrowed. */
    const struct source_facts *sources;
    /* Why there are no GPU facts (the nvml source could not open), recorded as gpu_error
     * (mlbench env). NULL: not recorded (a result says it in sampling.not_measured). */
    const char *gpu_error;
    /* Variables to filter, as environ; NULL: this process's environment. */
    char *const *envp;
    /* The Python interpreter whose version and packages are recorded (`python`): the
     * workload's own when it is one, "python3" (from PATH) for mlbench env. NULL: none, no
     * `python` object (starting an interpreter is not free). */
    const char *python;
};

/* Captures the environment. opt may be NULL (all defaults). Returns a new reference to an
 * object, never NULL; the fields are those of docs/environment.md. With facts not NULL, the
 * typed facts the object records (machine_facts.h) go into *facts, whose former contents are
 * not freed (free it with machine_facts_free). Takes a few milliseconds plus the git commands
 * (2 s at most). Opens no metric source. Not thread-safe against setenv(). */
json_t *envinfo_capture(const struct envinfo_options *opt, struct machine_facts *facts);

/* Writes env (an object made by envinfo_capture, maybe read back from a result: any field may
 * be missing) as text for a terminal, one aspect a line. */
void envinfo_print(FILE *out, const json_t *env);

/* --- Parsers and filters, exported for the tests. Pure, thread-safe. --- */

/* Fields of /etc/os-release text (KEY=value lines, values maybe quoted): an object with
 * pretty_name, name, id, version_id and version where present, or NULL when none is. */
json_t *envinfo_parse_os_release(const char *text);

/* The CPU facts in /proc/cpuinfo text: an object with vendor, model, sockets, cores (physical,
 * all sockets), threads (logical CPUs listed) and features (the ML-relevant instruction set
 * extensions present, in a fixed order) where the text tells them; an empty object when it tells
 * nothing. Sockets and cores come from "physical id" and "core id" (x86); without them they are
 * left out. On ARM the model is named from "CPU implementer" and "CPU part". disable: a value of
 * MLBENCH_CPU_DISABLE (may be NULL): the features it names are left out of features and listed
 * in features_disabled (present only when it removed one). */
json_t *envinfo_parse_cpuinfo(const char *text, const char *disable);

/* True when list, a value of MLBENCH_CPU_DISABLE (feature names as /proc/cpuinfo spells them,
 * separated by commas, spaces or tabs: "avx512_bf16,amx_bf16"), names feature. list may be
 * NULL (names nothing). */
bool envinfo_cpu_disabled(const char *list, const char *feature);

/* True when the first CPU's flags (x86) or Features (ARM) line of /proc/cpuinfo text has the
 * word feature and disable (as envinfo_cpu_disabled's list; may be NULL) does not name it. */
bool envinfo_cpuinfo_has(const char *text, const char *disable, const char *feature);

/* envinfo_cpuinfo_has of this machine's /proc/cpuinfo and this process's MLBENCH_CPU_DISABLE:
 * whether to use an instruction set extension ("avx512_bf16"), as the workloads decide it.
 * False when /proc/cpuinfo cannot be read. Reads the file on each call; not thread-safe
 * against setenv(). */
bool envinfo_cpu_has(const char *feature);

/* A size as sysfs and /proc write it: "48K", "1024K", "32M", "1G", "512" (bytes), with an
 * optional "B" and spaces ("1024 KB" of cpuinfo, "24684092 kB" of meminfo). Units are binary.
 * Returns the bytes, or -1 when s is not such a size. */
int64_t envinfo_parse_size(const char *s);

/* Number of CPUs in a sysfs list such as "0-3,8,10-11" (trailing newline allowed), or -1 when
 * it does not parse. */
int envinfo_count_cpu_list(const char *list);

/* True when the variable NAME belongs in the record: it changes ML performance (OMP_*, MKL_*,
 * OPENBLAS_*, CUDA_*, NCCL_*, TF_*, PYTORCH_*, LD_PRELOAD ...: the list is in envinfo/vars.c and
 * docs/environment.md) and does not look like a secret (names with TOKEN, SECRET, PASSWORD,
 * PASSWD, CREDENTIAL, or KEY or KEYS as a word are never recorded, whatever their prefix), nor
 * one of Terraform's TF_* variables (TF_VAR_*, TF_CLI_*, TF_LOG ...). */
bool envinfo_variable_recorded(const char *name);

/* The recorded variables of envp (as environ): an array of {name, value}, sorted by name,
 * values as given (bytes that are not UTF-8 become '?'). */
json_t *envinfo_variables(char *const *envp);

/* The threads a BLAS library would start, by its rules, given envp: provider is the name
 * envinfo gives libraries ("openblas-pthread", "openblas-openmp", "openblas-serial", "mkl",
 * "blis", "blis-openmp", "reference", "atlas", ...), cpus the CPUs the process may run on,
 * cores the physical cores (<= 0: unknown). Returns the count (-1: cannot tell) and sets *from
 * to what decided it: a variable name, "cpus", "cores" or "single-threaded library". */
int envinfo_blas_threads(const char *provider, char *const *envp, int cpus, int cores,
                         const char **from);

/* The git state of dir: {commit, branch (absent when detached), dirty, changed_files}, or NULL
 * when dir is not in a git work tree with a commit, git is missing, or git took more than 2 s
 * (it is then killed). Runs git with posix_spawnp, no shell. "dirty" counts tracked files only:
 * untracked outputs and data sets would make every run dirty. */
json_t *envinfo_git(const char *dir);

#endif
