/* envinfo/cpu.c: the `cpu` object of the environment: model, vendor, sockets, cores and
 * threads from /proc/cpuinfo (x86 and ARM, whose model is named from implementer and part),
 * the ML-relevant instruction set extensions (less those MLBENCH_CPU_DISABLE names, as the
 * workloads treat them: workloads/common/cpu.h), topology from sysfs when cpuinfo does not say,
 * the caches of CPU 0 and the frequency policy (governor, limits, driver, boost). */
#include "result/envinfo/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Instruction set extensions that decide which kernels a BLAS, oneDNN or PyTorch uses: x86
 * "flags" then ARM "Features" names, in the order they are reported. */
static const char *const ml_features[] = {
    "sse4_2",      "avx",         "avx2",       "fma",        "f16c",
    "avx512f",     "avx512bw",    "avx512vl",   "avx512_vnni", "avx512_bf16",
    "avx512_fp16", "avx_vnni",    "amx_tile",   "amx_bf16",   "amx_int8",
    "asimd",       "asimdhp",     "asimddp",    "sve",        "sve2",
    "bf16",        "i8mm",        "sme",
};
_Static_assert(sizeof ml_features / sizeof ml_features[0] == ENVINFO_N_FEATURES,
               "ENVINFO_N_FEATURES (envinfo/internal.h) is the length of ml_features");

/* ARM CPU implementer and part numbers (as lscpu names them). */
static const struct {
    unsigned implementer, part;
    const char *model;
} arm_parts[] = {
    {0x41, 0xd03, "Cortex-A53"},  {0x41, 0xd07, "Cortex-A57"},  {0x41, 0xd08, "Cortex-A72"},
    {0x41, 0xd0b, "Cortex-A76"},  {0x41, 0xd0c, "Neoverse-N1"}, {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd49, "Neoverse-N2"}, {0x41, 0xd4f, "Neoverse-V2"}, {0x41, 0xd84, "Neoverse-V3"},
    {0x41, 0xd8e, "Neoverse-N3"}, {0x48, 0xd01, "Kunpeng-920"}, {0xc0, 0xac3, "Ampere-1"},
    {0xc0, 0xac4, "Ampere-1a"},
};

static const char *arm_vendor(unsigned implementer)
{
    switch (implementer) {
    case 0x41: return "ARM";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0xc0: return "Ampere";
    default: return NULL;
    }
}

struct core_id {
    long socket, core;
};

static int core_id_cmp(const void *a, const void *b)
{
    const struct core_id *x = a, *y = b;
    if (x->socket != y->socket)
        return x->socket < y->socket ? -1 : 1;
    return x->core < y->core ? -1 : x->core > y->core;
}

static void core_id_push(struct core_id **ids, size_t *n, size_t *cap, struct core_id id)
{
    *ids = xgrow(*ids, cap, *n + 1, sizeof **ids);
    (*ids)[(*n)++] = id;
}

/* Distinct sockets and (socket, core) pairs among ids (sorted here); untouched when n is 0. */
static void core_id_count(struct core_id *ids, size_t n, int *sockets, int *cores)
{
    if (n == 0)
        return;
    qsort(ids, n, sizeof *ids, core_id_cmp);
    *sockets = *cores = 1;
    for (size_t i = 1; i < n; i++) {
        if (ids[i].socket != ids[i - 1].socket)
            (*sockets)++;
        if (core_id_cmp(&ids[i], &ids[i - 1]) != 0)
            (*cores)++;
    }
}

/* True when the space-separated list has the word w. */
static bool has_word(const char *list, size_t len, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= len; i++) {
        if ((i == 0 || list[i - 1] == ' ' || list[i - 1] == '\t') && !strncmp(list + i, w, wl) &&
            (i + wl == len || list[i + wl] == ' ' || list[i + wl] == '\t'))
            return true;
    }
    return false;
}

bool envinfo_cpu_disabled(const char *list, const char *feature)
{
    size_t flen = feature ? strlen(feature) : 0;
    while (flen && list && *list) {
        list += strspn(list, ", \t");
        size_t len = strcspn(list, ", \t");
        if (len == flen && !strncmp(list, feature, len))
            return true;
        list += len;
    }
    return false;
}

/* One "key : value" line of cpuinfo, both without surrounding white space. */
struct cpuinfo_line {
    const char *key, *value;
    size_t klen, vlen;
};

/* The line at *p into *l, *p moved past it. False at the end of the text. */
static bool next_line(const char **p, struct cpuinfo_line *l)
{
    const char *line = *p;
    if (!line || !*line)
        return false;
    size_t len = strcspn(line, "\n");
    const char *colon = memchr(line, ':', len);
    l->key = line;
    l->klen = colon ? (size_t)(colon - line) : 0;
    while (l->klen > 0 && isspace((unsigned char)line[l->klen - 1]))
        l->klen--;
    l->value = colon ? colon + 1 : line + len;
    while (l->value < line + len && isspace((unsigned char)*l->value))
        l->value++;
    l->vlen = (size_t)(line + len - l->value);
    while (l->vlen > 0 && isspace((unsigned char)l->value[l->vlen - 1]))
        l->vlen--;
    *p = line + len + (line[len] == '\n');
    return true;
}

static void parse_cpuinfo(const char *text, const char *disable, struct cpuinfo_facts *f)
{
    memset(f, 0, sizeof *f);
    f->implementer = f->part = -1;
    f->sockets = f->cores = -1;
    struct core_id *ids = NULL, cur = {-1, -1};
    size_t n_ids = 0, cap_ids = 0;
    bool features_done = false, saw_topology = false;

    struct cpuinfo_line l;
    for (const char *next = text; next_line(&next, &l);) {
        const char *line = l.key, *v = l.value;
        size_t klen = l.klen, vlen = l.vlen;
#define KEY(k) (klen == strlen(k) && !strncmp(line, k, klen))
        if (KEY("processor") && vlen > 0 && isdigit((unsigned char)*v)) {
            /* a new logical CPU: keep the previous one's (socket, core) */
            if (cur.core >= 0)
                core_id_push(&ids, &n_ids, &cap_ids, cur);
            cur = (struct core_id){-1, -1};
            f->threads++;
        } else if (KEY("physical id")) {
            cur.socket = strtol(v, NULL, 10);
            saw_topology = true;
        } else if (KEY("core id")) {
            cur.core = strtol(v, NULL, 10);
        } else if ((KEY("vendor_id") || KEY("vendor")) && !f->vendor[0]) {
            snprintf(f->vendor, sizeof f->vendor, "%.*s", (int)vlen, v);
        } else if ((KEY("model name") || KEY("cpu model") || KEY("cpu")) && !f->model[0]) {
            snprintf(f->model, sizeof f->model, "%.*s", (int)vlen, v);
        } else if (KEY("CPU implementer") && f->implementer < 0) {
            f->implementer = strtol(v, NULL, 0);
        } else if (KEY("CPU part") && f->part < 0) {
            f->part = strtol(v, NULL, 0);
        } else if ((KEY("flags") || KEY("Features")) && !features_done) {
            features_done = true; /* the first CPU's: they are alike on all but odd machines */
            if (KEY("flags")) {
                f->has_flags = true;
                f->hypervisor = has_word(v, vlen, "hypervisor");
            }
            for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++) {
                bool present = has_word(v, vlen, ml_features[i]);
                bool off = present && envinfo_cpu_disabled(disable, ml_features[i]);
                f->feature[i] = present && !off;
                f->feature_disabled[i] = off;
            }
        }
#undef KEY
    }
    if (cur.core >= 0)
        core_id_push(&ids, &n_ids, &cap_ids, cur);
    if (saw_topology)
        core_id_count(ids, n_ids, &f->sockets, &f->cores);
    free(ids);

    if (!f->model[0] && f->implementer >= 0) {
        const char *vendor = arm_vendor((unsigned)f->implementer);
        for (size_t i = 0; i < sizeof arm_parts / sizeof arm_parts[0]; i++)
            if (arm_parts[i].implementer == (unsigned)f->implementer &&
                arm_parts[i].part == (unsigned)f->part)
                snprintf(f->model, sizeof f->model, "%s", arm_parts[i].model);
        if (!f->model[0] && f->part >= 0)
            snprintf(f->model, sizeof f->model, "implementer 0x%02lx part 0x%03lx",
                     f->implementer, f->part);
        if (!f->vendor[0] && vendor)
            snprintf(f->vendor, sizeof f->vendor, "%s", vendor);
    }
}

static json_t *cpuinfo_json(const struct cpuinfo_facts *f)
{
    json_t *o = json_object();
    envinfo_set_text(o, "vendor", f->vendor);
    envinfo_set_text(o, "model", f->model);
    if (f->sockets > 0)
        envinfo_set_int(o, "sockets", f->sockets);
    if (f->cores > 0)
        envinfo_set_int(o, "cores", f->cores);
    if (f->threads > 0)
        envinfo_set_int(o, "threads", f->threads);
    json_t *feat = json_array();
    for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++)
        if (f->feature[i])
            json_array_append_new(feat, json_string(ml_features[i]));
    bool any_disabled = false;
    for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++)
        any_disabled |= f->feature_disabled[i];
    if (json_array_size(feat) > 0 || f->has_flags || any_disabled)
        json_object_set_new(o, "features", feat);
    else
        json_decref(feat);
    /* Only when the override removed something: results without it stay as they were, and
     * `mlbench env` can say which features a run was told to do without. */
    if (any_disabled) {
        json_t *off = json_array();
        for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++)
            if (f->feature_disabled[i])
                json_array_append_new(off, json_string(ml_features[i]));
        json_object_set_new(o, "features_disabled", off);
    }
    return o;
}

void envinfo_cpu_machine_facts(const struct cpuinfo_facts *f, struct machine_facts *m)
{
    _Static_assert(ENVINFO_N_FEATURES <= MACHINE_MAX_CPU_FEATURES,
                   "machine_facts holds every extension looked for");
    envinfo_copy_text(m->cpu_model, sizeof m->cpu_model, f->model);
    m->n_cpu_features = 0;
    for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++)
        if (f->feature[i])
            m->cpu_features[m->n_cpu_features++] = ml_features[i];
}

json_t *envinfo_parse_cpuinfo(const char *text, const char *disable)
{
    struct cpuinfo_facts f;
    parse_cpuinfo(text, disable, &f);
    return cpuinfo_json(&f);
}

bool envinfo_cpuinfo_has(const char *text, const char *disable, const char *feature)
{
    if (!feature || !*feature || strpbrk(feature, " \t") || envinfo_cpu_disabled(disable, feature))
        return false;
    struct cpuinfo_line l;
    for (const char *next = text; next_line(&next, &l);)
        if ((l.klen == 5 && !strncmp(l.key, "flags", 5)) ||
            (l.klen == 8 && !strncmp(l.key, "Features", 8)))
            return has_word(l.value, l.vlen, feature); /* the first CPU's, as parse_cpuinfo */
    return false;
}

bool envinfo_cpu_has(const char *feature)
{
    char *text = envinfo_read_file("", "/proc/cpuinfo");
    bool has = envinfo_cpuinfo_has(text ? text : "", getenv("MLBENCH_CPU_DISABLE"), feature);
    free(text);
    return has;
}

/* Sockets and physical cores from sysfs topology, for machines whose cpuinfo does not say (ARM). */
static void topology_from_sysfs(const char *root, int *sockets, int *cores)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/sys/devices/system/cpu", root);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct core_id *ids = NULL;
    size_t n = 0, cap = 0;
    const struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "cpu", 3) || !isdigit((unsigned char)e->d_name[3]))
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%s/topology/core_id", e->d_name);
        int64_t core = envinfo_read_int(root, path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%s/topology/physical_package_id",
                 e->d_name);
        int64_t pkg = envinfo_read_int(root, path);
        if (core >= 0) /* offline CPUs have no topology */
            core_id_push(&ids, &n, &cap, (struct core_id){(long)pkg, (long)core});
    }
    closedir(d);
    core_id_count(ids, n, sockets, cores);
    free(ids);
}

/* Caches of CPU 0: [{name "L1d", size_bytes, shared_by_cpus}]. */
static json_t *caches_json(const char *root)
{
    json_t *a = json_array();
    for (int i = 0; i < 16; i++) {
        char path[128], type[32], size[32], list[256];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        int64_t level = envinfo_read_int(root, path);
        if (level < 0)
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (!envinfo_read_line(root, path, type, sizeof type))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        int64_t bytes =
            envinfo_read_line(root, path, size, sizeof size) ? envinfo_parse_size(size) : -1;
        char name[16];
        snprintf(name, sizeof name, "L%d%s", (int)level,
                 !strcmp(type, "Data") ? "d" : !strcmp(type, "Instruction") ? "i" : "");
        json_t *c = json_pack("{s:s}", "name", name);
        envinfo_set_int(c, "size_bytes", bytes);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        if (envinfo_read_line(root, path, list, sizeof list)) {
            int shared = envinfo_count_cpu_list(list);
            if (shared > 0)
                envinfo_set_int(c, "shared_by_cpus", shared);
        }
        json_array_append_new(a, c);
    }
    return a;
}

/* Adds the distinct values of file in every cpufreq policy, joined with "," when they differ. */
struct distinct {
    char v[8][48];
    int n;
};

static void distinct_add(struct distinct *d, const char *s)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->v[i], s))
            return;
    if (d->n < 8)
        snprintf(d->v[d->n++], sizeof d->v[0], "%s", s);
}

static void distinct_set(json_t *o, const char *key, const struct distinct *d)
{
    char buf[8 * 49] = "";
    for (int i = 0; i < d->n; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, d->v[i]);
    }
    envinfo_set_text(o, key, buf);
}

/* Frequency policy of every cpufreq policy: governor(s), limits, driver, boost. */
static void cpufreq_json(const char *root, json_t *cpu)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/sys/devices/system/cpu/cpufreq", root);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct distinct governors = {.n = 0}, epp = {.n = 0}, drivers = {.n = 0};
    int64_t hw_min = -1, hw_max = -1, sc_min = -1, sc_max = -1;
    const struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "policy", 6) || !isdigit((unsigned char)e->d_name[6]))
            continue;
        char path[PATH_MAX], buf[64];
        const char *base = "/sys/devices/system/cpu/cpufreq";
#define POLICY_FILE(f) (snprintf(path, sizeof path, "%s/%s/" f, base, e->d_name), path)
        if (envinfo_read_line(root, POLICY_FILE("scaling_governor"), buf, sizeof buf))
            distinct_add(&governors, buf);
        if (envinfo_read_line(root, POLICY_FILE("energy_performance_preference"), buf, sizeof buf))
            distinct_add(&epp, buf);
        if (envinfo_read_line(root, POLICY_FILE("scaling_driver"), buf, sizeof buf))
            distinct_add(&drivers, buf);
        int64_t v;
        if ((v = envinfo_read_int(root, POLICY_FILE("cpuinfo_min_freq"))) > 0 &&
            (hw_min < 0 || v < hw_min))
            hw_min = v;
        if ((v = envinfo_read_int(root, POLICY_FILE("cpuinfo_max_freq"))) > hw_max)
            hw_max = v;
        if ((v = envinfo_read_int(root, POLICY_FILE("scaling_min_freq"))) > 0 &&
            (sc_min < 0 || v < sc_min))
            sc_min = v;
        if ((v = envinfo_read_int(root, POLICY_FILE("scaling_max_freq"))) > sc_max)
            sc_max = v;
#undef POLICY_FILE
    }
    closedir(d);
    distinct_set(cpu, "governor", &governors);
    distinct_set(cpu, "energy_performance_preference", &epp);
    distinct_set(cpu, "frequency_driver", &drivers);
    /* sysfs gives kHz */
    if (hw_min > 0)
        json_object_set_new(cpu, "min_mhz", json_real((double)hw_min / 1000.0));
    if (hw_max > 0)
        json_object_set_new(cpu, "max_mhz", json_real((double)hw_max / 1000.0));
    if (sc_min > 0)
        json_object_set_new(cpu, "scaling_min_mhz", json_real((double)sc_min / 1000.0));
    if (sc_max > 0)
        json_object_set_new(cpu, "scaling_max_mhz", json_real((double)sc_max / 1000.0));
    int64_t boost = envinfo_read_int(root, "/sys/devices/system/cpu/cpufreq/boost");
    if (boost < 0) {
        int64_t no_turbo = envinfo_read_int(root, "/sys/devices/system/cpu/intel_pstate/no_turbo");
        boost = no_turbo < 0 ? -1 : !no_turbo;
    }
    if (boost >= 0)
        json_object_set_new(cpu, "boost", json_boolean(boost != 0));
}

/* CPUs this process may run on (sched_getaffinity), or -1. */
int envinfo_cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    return CPU_COUNT(&set);
}

json_t *envinfo_cpu(const char *root, char *const *envp, struct cpuinfo_facts *f)
{
    char *text = envinfo_read_file(root, "/proc/cpuinfo");
    parse_cpuinfo(text ? text : "", envinfo_getenv(envp, "MLBENCH_CPU_DISABLE"), f);
    free(text);
    if (f->sockets < 0)
        topology_from_sysfs(root, &f->sockets, &f->cores);
    json_t *cpu = cpuinfo_json(f);
    json_t *caches = caches_json(root);
    if (json_array_size(caches) > 0)
        json_object_set_new(cpu, "caches", caches);
    else
        json_decref(caches);
    cpufreq_json(root, cpu);
    return cpu;
}
