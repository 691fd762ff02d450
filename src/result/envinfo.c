/* envinfo: captures what a measurement ran on (see envinfo.h; every field is described in
 * docs/environment.md). Sections: file helpers, parsers (pure), CPU, memory and limits, system,
 * BLAS, GPUs, virtualisation, variables, git, build, the capture itself, text rendering. */
#include "result/envinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "measure/sampler.h"
#include "sources/sources.h"
#include "util/units.h"
#include "util/xalloc.h"
#include "sources/nvml.h"

extern char **environ;

#define GIT_TIMEOUT_NS 2000000000LL
#define FILE_MAX_BYTES (16u << 20) /* /proc/cpuinfo of a 1000-CPU machine is about 1.5 MiB */

/* ---------------------------------------------------------------- file helpers */

static const char *root_of(const struct envinfo_options *opt)
{
    return opt && opt->root ? opt->root : "";
}

/* The whole file ROOT/path as a NUL-terminated string owned by the caller, or NULL. */
static char *read_file(const char *root, const char *path)
{
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
        return NULL;
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (len + 1 == cap) {
            if (cap >= FILE_MAX_BYTES)
                break;
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0) {
                free(buf);
                close(fd);
                return NULL;
            }
            break;
        }
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

/* The first line of ROOT/path, without surrounding white space, into buf. False when the file
 * could not be read or that line is empty. */
static bool read_line(const char *root, const char *path, char *buf, size_t len)
{
    char *text = read_file(root, path);
    if (!text)
        return false;
    const char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, "\n");
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    snprintf(buf, len, "%.*s", (int)n, s);
    free(text);
    return n > 0;
}

/* A whole number read from ROOT/path, or -1. */
static int64_t read_int(const char *root, const char *path)
{
    char buf[64], *end;
    if (!read_line(root, path, buf, sizeof buf))
        return -1;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    return errno || end == buf || *end ? -1 : (int64_t)v;
}

/* Sets key to s when s is a non-empty string; bytes that are not UTF-8 become '?'. */
static void set_text(json_t *o, const char *key, const char *s)
{
    if (!s || !*s)
        return;
    char *clean = units_utf8_sanitize(s, strlen(s));
    json_object_set_new(o, key, json_string(clean));
    free(clean);
}

static void set_int(json_t *o, const char *key, int64_t v)
{
    if (v >= 0)
        json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* Adds o under key when it has any field, else drops it. */
static void set_object(json_t *parent, const char *key, json_t *o)
{
    if (o && json_object_size(o) > 0)
        json_object_set_new(parent, key, o);
    else
        json_decref(o);
}

/* The value of NAME in envp, or NULL. */
static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

/* ---------------------------------------------------------------- parsers */

/* Copies an os-release value (maybe quoted, with backslash escapes) into out. */
static void os_release_value(const char *v, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    char quote = 0;
    if (n > 0 && (v[0] == '"' || v[0] == '\'')) {
        quote = v[0];
        v++;
        n--;
    }
    for (size_t i = 0; i < n && o + 1 < outlen; i++) {
        if (quote && v[i] == quote)
            break;
        if (quote == '"' && v[i] == '\\' && i + 1 < n)
            i++;
        out[o++] = v[i];
    }
    out[o] = '\0';
}

json_t *envinfo_parse_os_release(const char *text)
{
    static const struct {
        const char *var, *key;
    } wanted[] = {
        {"PRETTY_NAME", "pretty_name"}, {"NAME", "name"},       {"ID", "id"},
        {"VERSION_ID", "version_id"},   {"VERSION", "version"},
    };
    json_t *o = json_object();
    for (const char *line = text; line && *line;) {
        size_t len = strcspn(line, "\n");
        const char *eq = memchr(line, '=', len);
        if (eq && line[0] != '#') {
            for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
                size_t klen = strlen(wanted[i].var);
                if ((size_t)(eq - line) == klen && !strncmp(line, wanted[i].var, klen)) {
                    char value[256];
                    os_release_value(eq + 1, len - (size_t)(eq - line) - 1, value, sizeof value);
                    set_text(o, wanted[i].key, value);
                }
            }
        }
        line += len + (line[len] == '\n');
    }
    if (json_object_size(o) == 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Instruction set extensions that decide which kernels a BLAS, oneDNN or PyTorch uses: x86
 * "flags" then ARM "Features" names, in the order they are reported. */
static const char *const ml_features[] = {
    "sse4_2",      "avx",         "avx2",       "fma",        "f16c",
    "avx512f",     "avx512bw",    "avx512vl",   "avx512_vnni", "avx512_bf16",
    "avx512_fp16", "avx_vnni",    "amx_tile",   "amx_bf16",   "amx_int8",
    "asimd",       "asimdhp",     "asimddp",    "sve",        "sve2",
    "bf16",        "i8mm",        "sme",
};

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

/* What /proc/cpuinfo tells; -1 / "" where it does not. */
struct cpuinfo_facts {
    char vendor[64], model[160];
    long implementer, part; /* ARM */
    int threads, sockets, cores;
    bool has_flags;         /* an x86 "flags" line: the hypervisor bit is known */
    bool hypervisor;        /* that line has "hypervisor": running under a hypervisor */
    bool feature[sizeof ml_features / sizeof ml_features[0]];
};

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
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *ids = xreallocarray(*ids, *cap, sizeof **ids);
    }
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

static void parse_cpuinfo(const char *text, struct cpuinfo_facts *f)
{
    memset(f, 0, sizeof *f);
    f->implementer = f->part = -1;
    f->sockets = f->cores = -1;
    struct core_id *ids = NULL, cur = {-1, -1};
    size_t n_ids = 0, cap_ids = 0;
    bool features_done = false, saw_topology = false;

    for (const char *line = text; line && *line;) {
        size_t len = strcspn(line, "\n");
        const char *colon = memchr(line, ':', len);
        size_t klen = colon ? (size_t)(colon - line) : 0;
        while (klen > 0 && isspace((unsigned char)line[klen - 1]))
            klen--;
        const char *v = colon ? colon + 1 : line + len;
        while (v < line + len && isspace((unsigned char)*v))
            v++;
        size_t vlen = (size_t)(line + len - v);
        while (vlen > 0 && isspace((unsigned char)v[vlen - 1]))
            vlen--;
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
            for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++)
                f->feature[i] = has_word(v, vlen, ml_features[i]);
        }
#undef KEY
        line += len + (line[len] == '\n');
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
    set_text(o, "vendor", f->vendor);
    set_text(o, "model", f->model);
    if (f->sockets > 0)
        set_int(o, "sockets", f->sockets);
    if (f->cores > 0)
        set_int(o, "cores", f->cores);
    if (f->threads > 0)
        set_int(o, "threads", f->threads);
    json_t *feat = json_array();
    for (size_t i = 0; i < sizeof ml_features / sizeof ml_features[0]; i++)
        if (f->feature[i])
            json_array_append_new(feat, json_string(ml_features[i]));
    if (json_array_size(feat) > 0 || f->has_flags)
        json_object_set_new(o, "features", feat);
    else
        json_decref(feat);
    return o;
}

json_t *envinfo_parse_cpuinfo(const char *text)
{
    struct cpuinfo_facts f;
    parse_cpuinfo(text, &f);
    return cpuinfo_json(&f);
}

int64_t envinfo_parse_size(const char *s)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    while (*end == ' ')
        end++;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'I' && shift)
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end || v > (unsigned long long)INT64_MAX >> shift)
        return -1;
    return (int64_t)(v << shift);
}

int envinfo_count_cpu_list(const char *list)
{
    int n = 0;
    const char *s = list;
    if (!s)
        return -1;
    while (*s && *s != '\n') {
        char *end;
        if (!isdigit((unsigned char)*s))
            return -1;
        long a = strtol(s, &end, 10), b = a;
        if (*end == '-') {
            if (!isdigit((unsigned char)end[1]))
                return -1;
            b = strtol(end + 1, &end, 10);
        }
        if (b < a || b - a >= INT_MAX - n)
            return -1;
        n += (int)(b - a + 1);
        s = end;
        if (*s == ',')
            s++;
        else if (*s && *s != '\n')
            return -1;
    }
    return n > 0 ? n : -1;
}

/* ---------------------------------------------------------------- CPU */

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
        int64_t core = read_int(root, path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%s/topology/physical_package_id",
                 e->d_name);
        int64_t pkg = read_int(root, path);
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
        int64_t level = read_int(root, path);
        if (level < 0)
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (!read_line(root, path, type, sizeof type))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        int64_t bytes = read_line(root, path, size, sizeof size) ? envinfo_parse_size(size) : -1;
        char name[16];
        snprintf(name, sizeof name, "L%d%s", (int)level,
                 !strcmp(type, "Data") ? "d" : !strcmp(type, "Instruction") ? "i" : "");
        json_t *c = json_pack("{s:s}", "name", name);
        set_int(c, "size_bytes", bytes);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        if (read_line(root, path, list, sizeof list)) {
            int shared = envinfo_count_cpu_list(list);
            if (shared > 0)
                set_int(c, "shared_by_cpus", shared);
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
    set_text(o, key, buf);
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
        if (read_line(root, POLICY_FILE("scaling_governor"), buf, sizeof buf))
            distinct_add(&governors, buf);
        if (read_line(root, POLICY_FILE("energy_performance_preference"), buf, sizeof buf))
            distinct_add(&epp, buf);
        if (read_line(root, POLICY_FILE("scaling_driver"), buf, sizeof buf))
            distinct_add(&drivers, buf);
        int64_t v;
        if ((v = read_int(root, POLICY_FILE("cpuinfo_min_freq"))) > 0 && (hw_min < 0 || v < hw_min))
            hw_min = v;
        if ((v = read_int(root, POLICY_FILE("cpuinfo_max_freq"))) > hw_max)
            hw_max = v;
        if ((v = read_int(root, POLICY_FILE("scaling_min_freq"))) > 0 && (sc_min < 0 || v < sc_min))
            sc_min = v;
        if ((v = read_int(root, POLICY_FILE("scaling_max_freq"))) > sc_max)
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
    int64_t boost = read_int(root, "/sys/devices/system/cpu/cpufreq/boost");
    if (boost < 0) {
        int64_t no_turbo = read_int(root, "/sys/devices/system/cpu/intel_pstate/no_turbo");
        boost = no_turbo < 0 ? -1 : !no_turbo;
    }
    if (boost >= 0)
        json_object_set_new(cpu, "boost", json_boolean(boost != 0));
}

/* CPUs this process may run on (sched_getaffinity), or -1. */
static int cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    return CPU_COUNT(&set);
}

static json_t *cpu_json(const char *root, struct cpuinfo_facts *f)
{
    char *text = read_file(root, "/proc/cpuinfo");
    parse_cpuinfo(text ? text : "", f);
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

/* ---------------------------------------------------------------- memory and limits */

/* A "Key:   123 kB" field of /proc/meminfo text, in bytes, or -1. */
static int64_t meminfo_field(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *line = text; line && *line;) {
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            char value[64];
            size_t n = strcspn(line + kl + 1, "\n");
            snprintf(value, sizeof value, "%.*s", (int)n, line + kl + 1);
            return envinfo_parse_size(value);
        }
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return -1;
}

/* Entries nodeN of a sysfs directory, or -1 when it cannot be read. */
static int count_numbered(const char *root, const char *path, const char *prefix)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s%s", root, path);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    size_t pl = strlen(prefix);
    const struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, pl) && isdigit((unsigned char)e->d_name[pl]))
            n++;
    closedir(d);
    return n > 0 ? n : -1;
}

static json_t *memory_json(const char *root)
{
    json_t *o = json_object();
    char *text = read_file(root, "/proc/meminfo");
    if (text) {
        set_int(o, "total_bytes", meminfo_field(text, "MemTotal"));
        set_int(o, "swap_bytes", meminfo_field(text, "SwapTotal"));
        free(text);
    }
    char thp[128];
    if (read_line(root, "/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp)) {
        const char *open_b = strchr(thp, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;
        if (open_b && close_b) {
            char mode[32];
            snprintf(mode, sizeof mode, "%.*s", (int)(close_b - open_b - 1), open_b + 1);
            set_text(o, "transparent_hugepages", mode);
        }
    }
    int nodes = count_numbered(root, "/sys/devices/system/node", "node");
    if (nodes > 0)
        set_int(o, "numa_nodes", nodes);
    return o;
}

/* The smallest limit of file along the cgroup path and its parents (nested limits all apply),
 * under mount. value() turns the file into a limit, < 0 for none. */
static double cgroup_limit(const char *root, const char *mount, const char *cg_path,
                           const char *file, double (*value)(const char *root, const char *path))
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", cg_path);
    double best = -1;
    for (;;) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s%s%s%s", mount, p, *p && p[strlen(p) - 1] == '/' ? "" : "/",
                     file) < (int)sizeof path) {
            double v = value(root, path);
            if (v >= 0 && (best < 0 || v < best))
                best = v;
        }
        char *slash = strrchr(p, '/');
        if (!slash || (slash == p && p[1] == '\0'))
            break;
        slash[slash == p] = '\0'; /* "/a" becomes "/" */
    }
    return best;
}

/* cgroup v2 cpu.max: "QUOTA PERIOD" or "max PERIOD", as cores. */
static double cpu_max_value(const char *root, const char *path)
{
    char buf[64];
    double quota, period;
    if (!read_line(root, path, buf, sizeof buf) || sscanf(buf, "%lf %lf", &quota, &period) != 2 ||
        period <= 0 || quota <= 0)
        return -1;
    return quota / period;
}

/* A byte count, "max", or the v1 "unlimited" (about 2^63 rounded to a page). */
static double bytes_value(const char *root, const char *path)
{
    int64_t v = read_int(root, path);
    return v > 0 && v < (INT64_C(1) << 60) ? (double)v : -1;
}

/* cgroup v1 cpu.cfs_quota_us next to cpu.cfs_period_us, as cores. */
static double cfs_quota_value(const char *root, const char *path)
{
    int64_t quota = read_int(root, path);
    char period_path[PATH_MAX];
    snprintf(period_path, sizeof period_path, "%.*s/cpu.cfs_period_us",
             (int)(strrchr(path, '/') - path), path);
    int64_t period = read_int(root, period_path);
    return quota > 0 && period > 0 ? (double)quota / (double)period : -1;
}

/* CPU and memory limits of this process's cgroup (v2, or v1 cpu and memory controllers). */
static json_t *cgroup_json(const char *root)
{
    json_t *o = json_object();
    char *text = read_file(root, "/proc/self/cgroup");
    if (!text)
        return o;
    double cpu = -1, mem = -1;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        /* "ID:CONTROLLERS:PATH" */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *path = c2 + 1;
        double v;
        if (!*controllers) { /* v2 */
            if ((v = cgroup_limit(root, "/sys/fs/cgroup", path, "cpu.max", cpu_max_value)) >= 0)
                cpu = v;
            if ((v = cgroup_limit(root, "/sys/fs/cgroup", path, "memory.max", bytes_value)) >= 0)
                mem = v;
            continue;
        }
        char list[256];
        snprintf(list, sizeof list, ",%s,", controllers);
        if (strstr(list, ",cpu,") &&
            (v = cgroup_limit(root, "/sys/fs/cgroup/cpu", path, "cpu.cfs_quota_us",
                              cfs_quota_value)) >= 0)
            cpu = v;
        if (strstr(list, ",memory,") &&
            (v = cgroup_limit(root, "/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
                              bytes_value)) >= 0)
            mem = v;
    }
    free(text);
    if (cpu > 0)
        json_object_set_new(o, "cpu_limit_cores", json_real(cpu));
    if (mem > 0)
        set_int(o, "memory_limit_bytes", (int64_t)mem);
    return o;
}

/* ---------------------------------------------------------------- BLAS */

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
    const char *v = env_get(envp, name);
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
    set_text(o, key, path);
    blas_provider(path, provider, sizeof provider);
    snprintf(key, sizeof key, "%sprovider", prefix);
    set_text(o, key, provider);
    const char *from;
    int n = envinfo_blas_threads(provider, envp, cpus, cores, &from);
    if (n > 0) {
        snprintf(key, sizeof key, "%sthreads", prefix);
        set_int(o, key, n);
        snprintf(key, sizeof key, "%sthreads_from", prefix);
        set_text(o, key, from);
    }
}

static json_t *blas_json(const char *root, const char *machine, char *const *envp, int cpus,
                         int cores)
{
    json_t *o = json_object();
    blas_library(o, "", root, "libblas.so.3", machine, envp, cpus, cores);
    char path[PATH_MAX];
    if (alternative(root, "liblapack.so.3", machine, path, sizeof path))
        set_text(o, "lapack_library", path);
    blas_library(o, "openblas_", root, "libopenblas.so.0", machine, envp, cpus, cores);
    set_text(o, "openblas_coretype", env_get(envp, "OPENBLAS_CORETYPE"));
    return o;
}

/* ---------------------------------------------------------------- GPUs */

/* GPUs of the open nvml source (opening one for the capture when asked): gpus, gpu_driver, or
 * gpu_error saying why there are none. */
static void gpus_json(json_t *env, bool open_nvml)
{
    struct series_registry reg = {.defs = NULL, .n = 0, .cap = 0};
    void *state = NULL;
    bool opened = false;
    if (open_nvml && nvml_device_count() == 0) {
        struct sample_ctx ctx;
        char err[512] = "";
        memset(&ctx, 0, sizeof ctx);
        if (nvml_source.open(&reg, &ctx, &state, err, sizeof err) == 0)
            opened = true;
        else
            set_text(env, "gpu_error", err[0] ? err : "NVML could not be opened");
    }
    size_t n = nvml_device_count();
    if (n > 0) {
        json_t *gpus = json_array();
        for (size_t i = 0; i < n; i++) {
            struct nvml_device_facts f;
            if (nvml_device_get_facts(i, &f) != 0)
                continue;
            json_t *g = json_pack("{s:I, s:b}", "index", (json_int_t)i, "usable", f.usable);
            set_text(g, "name", f.name);
            set_text(g, "uuid", f.uuid);
            if (isfinite(f.memory_total_bytes) && f.memory_total_bytes > 0)
                set_int(g, "memory_bytes", (int64_t)f.memory_total_bytes);
            if (f.cc_major >= 0 && f.cc_minor >= 0)
                json_object_set_new(g, "compute_capability",
                                    json_sprintf("%d.%d", f.cc_major, f.cc_minor));
            json_array_append_new(gpus, g);
        }
        json_object_set_new(env, "gpus", gpus);
        char driver[96];
        if (nvml_driver_version(driver, sizeof driver) == 0)
            set_text(env, "gpu_driver", driver);
    }
    if (opened)
        nvml_source.close(state);
    series_registry_free(&reg);
}

/* ---------------------------------------------------------------- virtualisation */

/* DMI vendor or product names of hypervisors and clouds, and the name recorded. */
static const struct {
    const char *needle, *name;
    bool always_virtual; /* only ever a virtual machine (a cloud vendor also sells bare metal) */
} vm_vendors[] = {
    {"KVM", "kvm", true},           {"QEMU", "qemu", true},
    {"VMware", "vmware", true},     {"VirtualBox", "oracle", true},
    {"innotek", "oracle", true},    {"Xen", "xen", true},
    {"Bochs", "bochs", true},       {"BHYVE", "bhyve", true},
    {"Parallels", "parallels", true}, {"OpenStack", "openstack", true},
    {"Amazon EC2", "amazon", false}, {"Google", "google", false},
    {"Microsoft Corporation", "microsoft", false}, {"Alibaba Cloud", "alibaba", false},
    {"Oracle Corporation", "oracle-cloud", false},
};

static json_t *virtualization_json(const char *root, const struct cpuinfo_facts *cpu,
                                   char *const *envp, const char *kernel_release)
{
    json_t *evidence = json_array();
    const char *container = "none";
    char buf[256];

    char *cg = read_file(root, "/proc/1/cgroup");
    if (!cg)
        cg = read_file(root, "/proc/self/cgroup");
    struct stat st;
    char path[PATH_MAX];
    if (env_get(envp, "KUBERNETES_SERVICE_HOST") || (cg && strstr(cg, "kubepods"))) {
        container = "kubernetes";
        json_array_append_new(evidence, json_string(env_get(envp, "KUBERNETES_SERVICE_HOST")
                                                        ? "KUBERNETES_SERVICE_HOST is set"
                                                        : "cgroup path has kubepods"));
    } else if (snprintf(path, sizeof path, "%s/.dockerenv", root) > 0 && stat(path, &st) == 0) {
        container = "docker";
        json_array_append_new(evidence, json_string("/.dockerenv exists"));
    } else if (snprintf(path, sizeof path, "%s/run/.containerenv", root) > 0 &&
               stat(path, &st) == 0) {
        container = "podman";
        json_array_append_new(evidence, json_string("/run/.containerenv exists"));
    } else if (env_get(envp, "container") && *env_get(envp, "container")) {
        snprintf(buf, sizeof buf, "%s", env_get(envp, "container"));
        container = buf;
        json_array_append_new(evidence, json_string("variable container is set"));
    } else if (cg && (strstr(cg, "/docker") || strstr(cg, "docker-"))) {
        container = "docker";
        json_array_append_new(evidence, json_string("cgroup path has docker"));
    } else if (cg && strstr(cg, "/lxc")) {
        container = "lxc";
        json_array_append_new(evidence, json_string("cgroup path has lxc"));
    } else if (cg && strstr(cg, "containerd")) {
        container = "containerd";
        json_array_append_new(evidence, json_string("cgroup path has containerd"));
    }
    free(cg);

    const char *vm = "none";
    char vendor[128] = "", product[128] = "", hv_type[32] = "";
    read_line(root, "/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
    read_line(root, "/sys/class/dmi/id/product_name", product, sizeof product);
    read_line(root, "/sys/hypervisor/type", hv_type, sizeof hv_type);
    const char *dmi_name = NULL;
    bool dmi_always = false;
    for (size_t i = 0; i < sizeof vm_vendors / sizeof vm_vendors[0] && !dmi_name; i++)
        if (strstr(vendor, vm_vendors[i].needle) || strstr(product, vm_vendors[i].needle)) {
            dmi_name = vm_vendors[i].name;
            dmi_always = vm_vendors[i].always_virtual;
        }
    /* Hyper-V machines are "Microsoft Corporation" / "Virtual Machine"; a Surface is not one. */
    if (dmi_name && !strcmp(dmi_name, "microsoft") && !strstr(product, "Virtual Machine"))
        dmi_name = NULL;
    size_t plen = strlen(product);
    bool metal = plen > 6 && !strcmp(product + plen - 6, ".metal"); /* EC2 bare metal */
    if (cpu->has_flags && cpu->hypervisor) {
        vm = dmi_name ? dmi_name : hv_type[0] ? hv_type : "unknown";
        json_array_append_new(evidence, json_string("cpuinfo flags have hypervisor"));
    } else if (!cpu->has_flags && dmi_name && !metal) {
        vm = dmi_name; /* no hypervisor bit to ask (ARM): the DMI names are the evidence */
    } else if (dmi_name && dmi_always) {
        vm = dmi_name;
    } else if (hv_type[0]) {
        vm = hv_type;
        json_array_append_new(evidence, json_string("/sys/hypervisor/type is set"));
    }
    if (strcmp(vm, "none") && (vendor[0] || product[0]) && dmi_name) {
        snprintf(path, sizeof path, "DMI: %s %s", vendor, product);
        char *clean = units_utf8_sanitize(path, strlen(path));
        json_array_append_new(evidence, json_string(clean));
        free(clean);
    }
    if (!strcmp(vm, "none") && kernel_release &&
        (strstr(kernel_release, "microsoft") || strstr(kernel_release, "WSL"))) {
        vm = "wsl";
        json_array_append_new(evidence, json_string("kernel release names WSL"));
    }
    /* container and vm may come from a variable or a file: set_text keeps them valid UTF-8 */
    json_t *o = json_object();
    set_text(o, "container", container);
    set_text(o, "vm", vm);
    json_object_set_new(o, "evidence", evidence);
    return o;
}

/* ---------------------------------------------------------------- variables */

/* Prefixes (ending in '_') and whole names of the variables that change ML performance. */
static const char *const recorded_vars[] = {
    /* threading and affinity of OpenMP and BLAS */
    "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "GOTO_NUM_THREADS", "BLIS_",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_", "ONEDNN_", "DNNL_", "TOKENIZERS_PARALLELISM",
    /* GPUs and collectives */
    "CUDA_", "NVIDIA_", "NCCL_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "HIP_", "ROCR_", "HSA_",
    "MIOPEN_",
    /* frameworks */
    "TF_", "XLA_", "JAX_", "PYTORCH_", "TORCH_", "TORCHINDUCTOR_", "TRITON_",
    /* memory allocators and the loader */
    "MALLOC_", "TCMALLOC_", "GLIBC_TUNABLES", "LD_PRELOAD", "LD_LIBRARY_PATH",
    /* mlbench itself (a fake NVML, the store) */
    "MLBENCH_",
};

static bool looks_secret(const char *name)
{
    static const char *const words[] = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(name, words[i]))
            return true;
    for (const char *p = name; (p = strstr(p, "KEY")); p += 3) {
        bool start = p == name || p[-1] == '_';
        bool end = p[3] == '\0' || p[3] == '_' || (p[3] == 'S' && (p[4] == '\0' || p[4] == '_'));
        if (start && end)
            return true;
    }
    return false;
}

/* Terraform's variables share TensorFlow's TF_ prefix; TF_VAR_* may hold anything. */
static bool terraform_variable(const char *name)
{
    static const char *const tf[] = {
        "TF_VAR_", "TF_CLI_", "TF_TOKEN_", "TF_LOG", "TF_INPUT", "TF_DATA_DIR", "TF_WORKSPACE",
        "TF_IN_AUTOMATION", "TF_REGISTRY_", "TF_PLUGIN_", "TF_IGNORE", "TF_STATE_",
        "TF_APPEND_USER_AGENT", "TF_ACC",
    };
    for (size_t i = 0; i < sizeof tf / sizeof tf[0]; i++)
        if (!strncmp(name, tf[i], strlen(tf[i])))
            return true;
    return false;
}

bool envinfo_variable_recorded(const char *name)
{
    if (!name || !*name || looks_secret(name) || terraform_variable(name))
        return false;
    for (size_t i = 0; i < sizeof recorded_vars / sizeof recorded_vars[0]; i++) {
        const char *r = recorded_vars[i];
        size_t n = strlen(r);
        if (r[n - 1] == '_' ? !strncmp(name, r, n) && name[n] : !strcmp(name, r))
            return true;
    }
    return false;
}

static int var_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *envinfo_variables(char *const *envp)
{
    size_t n = 0;
    for (char *const *e = envp; e && *e; e++)
        n++;
    const char **picked = xcalloc(n + 1, sizeof *picked);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq || eq == envp[i])
            continue;
        char name[256];
        if ((size_t)(eq - envp[i]) >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(eq - envp[i]), envp[i]);
        if (envinfo_variable_recorded(name))
            picked[k++] = envp[i];
    }
    qsort(picked, k, sizeof *picked, var_cmp);
    json_t *a = json_array();
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(picked[i], '=');
        char *name = units_utf8_sanitize(picked[i], (size_t)(eq - picked[i]));
        char *value = units_utf8_sanitize(eq + 1, strlen(eq + 1));
        json_array_append_new(a, json_pack("{s:s, s:s}", "name", name, "value", value));
        free(name);
        free(value);
    }
    free(picked);
    return a;
}

/* ---------------------------------------------------------------- git */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Runs git with args (no shell) until deadline (CLOCK_MONOTONIC ns); its stdout goes into out
 * (truncated, NUL-terminated) and *lines counts its lines. Returns 0 when git exited 0, -1
 * otherwise (missing, failed, or killed at the deadline). */
static int run_git(char *const argv[], char *const envp[], char *out, size_t outlen, size_t *lines,
                   int64_t deadline)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, defaults;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    /* mlbench run blocks these and ignores SIGPIPE: git must get the usual behaviour */
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGCHLD);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        return -1;
    }

    size_t len = 0;
    *lines = 0;
    out[0] = '\0';
    bool timed_out = false;
    for (;;) {
        int64_t left = deadline - mono_ns();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        int r = poll(&p, 1, (int)(left / 1000000 + 1));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; /* the deadline is checked above */
        char buf[4096];
        ssize_t n = read(pfd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            *lines += buf[i] == '\n';
        size_t take = (size_t)n < outlen - 1 - len ? (size_t)n : outlen - 1 - len;
        memcpy(out + len, buf, take);
        len += take;
        out[len] = '\0';
    }
    close(pfd[0]);
    int status = 0;
    if (timed_out)
        kill(pid, SIGKILL);
    for (;;) {
        pid_t w = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
        if (w == pid)
            break;
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        /* still running after closing its output */
        if (mono_ns() >= deadline) {
            timed_out = true;
            kill(pid, SIGKILL);
            continue;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

json_t *envinfo_git(const char *dir)
{
    /* this process's environment, with git told not to take the index lock (a status that
     * refreshes the index would otherwise race with the user's own git commands) */
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **envp = xcalloc(n + 3, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "GIT_OPTIONAL_LOCKS=", 19) &&
            strncmp(environ[i], "GIT_TERMINAL_PROMPT=", 20))
            envp[k++] = environ[i];
    envp[k++] = (char *)"GIT_OPTIONAL_LOCKS=0";
    envp[k++] = (char *)"GIT_TERMINAL_PROMPT=0";
    envp[k] = NULL;

    char *d = (char *)(dir ? dir : ".");
    char *rev_argv[] = {"git", "-C", d, "rev-parse", "HEAD", "--abbrev-ref", "HEAD", NULL};
    char *status_argv[] = {"git", "-C", d, "status", "--porcelain", "--untracked-files=no", NULL};
    int64_t deadline = mono_ns() + GIT_TIMEOUT_NS;
    char rev[256], status[16];
    size_t rev_lines, changed;
    json_t *o = NULL;
    if (run_git(rev_argv, envp, rev, sizeof rev, &rev_lines, deadline) == 0 &&
        run_git(status_argv, envp, status, sizeof status, &changed, deadline) == 0) {
        char commit[64] = "", branch[200] = "";
        if (sscanf(rev, "%63s %199s", commit, branch) >= 1 && strlen(commit) >= 40) {
            o = json_object();
            set_text(o, "commit", commit);
            if (branch[0] && strcmp(branch, "HEAD"))
                set_text(o, "branch", branch);
            json_object_set_new(o, "dirty", json_boolean(changed > 0));
            set_int(o, "changed_files", (int64_t)changed);
        }
    }
    free(envp);
    return o;
}

/* ---------------------------------------------------------------- build */

static json_t *build_json(void)
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

/* ---------------------------------------------------------------- capture */

json_t *envinfo_capture(const struct envinfo_options *opt)
{
    const char *root = root_of(opt);
    char *const *envp = opt && opt->envp ? opt->envp : environ;
    json_t *env = json_object();

    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0)
        set_text(env, "hostname", host);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0)
        set_int(env, "cpus_online", online);
    int allowed = cpus_allowed();
    if (allowed > 0)
        set_int(env, "cpus_allowed", allowed);
    struct utsname u;
    bool have_uname = uname(&u) == 0;
    if (have_uname) {
        json_object_set_new(env, "kernel", json_sprintf("%s %s", u.sysname, u.release));
        set_text(env, "kernel_build", u.version);
        set_text(env, "machine", u.machine);
    }

    char *os_text = read_file(root, "/etc/os-release");
    if (!os_text)
        os_text = read_file(root, "/usr/lib/os-release");
    if (os_text) {
        json_t *os = envinfo_parse_os_release(os_text);
        if (os)
            json_object_set_new(env, "os", os);
        free(os_text);
    }
#ifdef __GLIBC__
    json_object_set_new(env, "libc",
                        json_pack("{s:s, s:s}", "name", "glibc", "version", gnu_get_libc_version()));
#endif
    json_object_set_new(env, "build", build_json());

    struct cpuinfo_facts cpu;
    set_object(env, "cpu", cpu_json(root, &cpu));
    set_object(env, "memory", memory_json(root));
    set_object(env, "cgroup", cgroup_json(root));
    set_object(env, "blas", blas_json(root, have_uname ? u.machine : NULL, envp,
                                      allowed > 0 ? allowed : (int)online, cpu.cores));
    gpus_json(env, opt && opt->open_nvml);
    json_object_set_new(env, "virtualization",
                        virtualization_json(root, &cpu, envp, have_uname ? u.release : NULL));
    json_object_set_new(env, "variables", envinfo_variables(envp));
    if (!(opt && opt->no_git)) {
        json_t *git = envinfo_git(opt ? opt->git_dir : NULL);
        if (git)
            json_object_set_new(env, "git", git);
    }
    return env;
}

/* ---------------------------------------------------------------- text */

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* An integer field, or -1. */
static int64_t jint_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static double jnum_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
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

static void print_cpu(FILE *out, const json_t *env)
{
    const json_t *cpu = json_object_get(env, "cpu");
    struct line l = {.len = 0};
    if (jstr(cpu, "model"))
        add(&l, "%s", jstr(cpu, "model"));
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
            add(&l, "%s %s (shared by %lld)", jstr(c, "name") ? jstr(c, "name") : "?", size,
                (long long)jint_of(c, "shared_by_cpus"));
        else
            add(&l, "%s %s", jstr(c, "name") ? jstr(c, "name") : "?", size);
    }
    emit(out, "  caches", &l);

    l.len = 0;
    if (jstr(cpu, "governor"))
        add(&l, "governor %s", jstr(cpu, "governor"));
    if (jstr(cpu, "energy_performance_preference"))
        add(&l, "energy preference %s", jstr(cpu, "energy_performance_preference"));
    double lo = jnum_of(cpu, "min_mhz"), hi = jnum_of(cpu, "max_mhz");
    if (isfinite(lo) && isfinite(hi))
        add(&l, "%.0f-%.0f MHz", lo, hi);
    lo = jnum_of(cpu, "scaling_min_mhz");
    hi = jnum_of(cpu, "scaling_max_mhz");
    if (isfinite(lo) && isfinite(hi))
        add(&l, "allowed %.0f-%.0f MHz", lo, hi);
    const json_t *boost = json_object_get(cpu, "boost");
    if (json_is_boolean(boost))
        add(&l, "boost %s", json_is_true(boost) ? "on" : "off");
    if (jstr(cpu, "frequency_driver"))
        add(&l, "driver %s", jstr(cpu, "frequency_driver"));
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
    }
}

static void print_blas(FILE *out, const json_t *env)
{
    const json_t *blas = json_object_get(env, "blas");
    struct line l = {.len = 0};
    if (jstr(blas, "provider"))
        add(&l, "%s (%s)", jstr(blas, "provider"), jstr(blas, "library") ? jstr(blas, "library") : "?");
    if (jint_of(blas, "threads") > 0)
        add(&l, "%lld thread%s (%s)", (long long)jint_of(blas, "threads"),
            jint_of(blas, "threads") == 1 ? "" : "s",
            jstr(blas, "threads_from") ? jstr(blas, "threads_from") : "?");
    if (!l.len)
        add(&l, "no libblas.so.3 alternative found");
    emit(out, "blas", &l);
    if (jstr(blas, "openblas_library")) {
        l.len = 0;
        add(&l, "%s (%s)", jstr(blas, "openblas_provider") ? jstr(blas, "openblas_provider") : "?",
            jstr(blas, "openblas_library"));
        if (jint_of(blas, "openblas_threads") > 0)
            add(&l, "%lld thread%s (%s)", (long long)jint_of(blas, "openblas_threads"),
                jint_of(blas, "openblas_threads") == 1 ? "" : "s",
                jstr(blas, "openblas_threads_from") ? jstr(blas, "openblas_threads_from") : "?");
        emit(out, "  openblas", &l);
    }
    l.len = 0;
    add(&l, "%s", jstr(blas, "openblas_coretype") ? jstr(blas, "openblas_coretype")
                                                  : "not set (OpenBLAS detects the CPU)");
    emit(out, "  coretype", &l);
}

static void print_gpus(FILE *out, const json_t *env)
{
    const json_t *gpus = json_object_get(env, "gpus"), *g;
    size_t i;
    if (!json_array_size(gpus)) {
        struct line l = {.len = 0};
        add(&l, "none%s%s", jstr(env, "gpu_error") ? ": " : "",
            jstr(env, "gpu_error") ? jstr(env, "gpu_error") : "");
        emit(out, "gpus", &l);
        return;
    }
    json_array_foreach(gpus, i, g) {
        struct line l = {.len = 0};
        char label[32];
        snprintf(label, sizeof label, "gpu %lld", (long long)jint_of(g, "index"));
        add(&l, "%s", jstr(g, "name") ? jstr(g, "name") : "unnamed");
        if (jint_of(g, "memory_bytes") > 0) {
            char size[32];
            add(&l, "%s", units_bytes((double)jint_of(g, "memory_bytes"), size, sizeof size));
        }
        if (jstr(g, "compute_capability"))
            add(&l, "compute capability %s", jstr(g, "compute_capability"));
        if (jstr(g, "uuid"))
            add(&l, "%s", jstr(g, "uuid"));
        if (json_is_false(json_object_get(g, "usable")))
            add(&l, "not usable (NVML gave no handle)");
        emit(out, label, &l);
    }
    struct line l = {.len = 0};
    if (jstr(env, "gpu_driver"))
        add(&l, "%s", jstr(env, "gpu_driver"));
    emit(out, "  driver", &l);
}

void envinfo_print(FILE *out, const json_t *env)
{
    struct line l = {.len = 0};
    char size[32];
    const json_t *build = json_object_get(env, "build");
    if (jstr(build, "version"))
        add(&l, "%s (%s)", jstr(build, "version"),
            jstr(build, "git_commit") ? jstr(build, "git_commit") : "?");
    if (jstr(build, "compiler"))
        add(&l, "%s", jstr(build, "compiler"));
    if (jstr(build, "type"))
        add(&l, "build %s", jstr(build, "type"));
    if (json_is_true(json_object_get(build, "address_sanitizer")))
        add(&l, "with AddressSanitizer (slower)");
    emit(out, "mlbench", &l);
    if (jstr(build, "flags")) {
        l.len = 0;
        add(&l, "%s", jstr(build, "flags"));
        emit(out, "  flags", &l);
    }

    l.len = 0;
    if (jstr(env, "hostname"))
        add(&l, "%s", jstr(env, "hostname"));
    emit(out, "host", &l);

    l.len = 0;
    const json_t *os = json_object_get(env, "os");
    const char *osname = jstr(os, "pretty_name") ? jstr(os, "pretty_name") : jstr(os, "name");
    if (osname)
        add(&l, "%s", osname);
    if (jstr(env, "kernel"))
        add(&l, "%s", jstr(env, "kernel"));
    if (jstr(env, "machine"))
        add(&l, "%s", jstr(env, "machine"));
    const json_t *libc = json_object_get(env, "libc");
    if (jstr(libc, "version"))
        add(&l, "%s %s", jstr(libc, "name") ? jstr(libc, "name") : "libc", jstr(libc, "version"));
    emit(out, "os", &l);

    print_cpu(out, env);

    l.len = 0;
    const json_t *mem = json_object_get(env, "memory");
    if (jint_of(mem, "total_bytes") >= 0)
        add(&l, "%s", units_bytes((double)jint_of(mem, "total_bytes"), size, sizeof size));
    if (jint_of(mem, "swap_bytes") >= 0)
        add(&l, "swap %s", units_bytes((double)jint_of(mem, "swap_bytes"), size, sizeof size));
    if (jstr(mem, "transparent_hugepages"))
        add(&l, "transparent hugepages %s", jstr(mem, "transparent_hugepages"));
    if (jint_of(mem, "numa_nodes") > 0)
        add(&l, "%lld NUMA node%s", (long long)jint_of(mem, "numa_nodes"),
            jint_of(mem, "numa_nodes") == 1 ? "" : "s");
    emit(out, "memory", &l);

    const json_t *cg = json_object_get(env, "cgroup");
    if (json_object_size(cg)) {
        l.len = 0;
        if (isfinite(jnum_of(cg, "cpu_limit_cores")))
            add(&l, "%.2f CPUs", jnum_of(cg, "cpu_limit_cores"));
        if (jint_of(cg, "memory_limit_bytes") > 0)
            add(&l, "%s memory",
                units_bytes((double)jint_of(cg, "memory_limit_bytes"), size, sizeof size));
        emit(out, "cgroup limit", &l);
    }

    print_blas(out, env);
    print_gpus(out, env);

    const json_t *virt = json_object_get(env, "virtualization");
    l.len = 0;
    if (jstr(virt, "container"))
        add(&l, "container %s", jstr(virt, "container"));
    if (jstr(virt, "vm"))
        add(&l, "virtual machine %s", jstr(virt, "vm"));
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

    l.len = 0;
    const json_t *git = json_object_get(env, "git");
    if (jstr(git, "commit")) {
        add(&l, "%.12s%s%s", jstr(git, "commit"), jstr(git, "branch") ? " on " : "",
            jstr(git, "branch") ? jstr(git, "branch") : "");
        if (json_is_true(json_object_get(git, "dirty")))
            add(&l, "dirty: %lld tracked file%s changed", (long long)jint_of(git, "changed_files"),
                jint_of(git, "changed_files") == 1 ? "" : "s");
        else
            add(&l, "clean");
    } else {
        add(&l, "not a git work tree");
    }
    emit(out, "git", &l);

    const json_t *vars = json_object_get(env, "variables"), *v;
    if (!json_array_size(vars)) {
        l.len = 0;
        add(&l, "none of those that change ML performance");
        emit(out, "variables", &l);
    }
    json_array_foreach(vars, i, v) {
        fprintf(out, "%-13s%s=%s\n", i == 0 ? "variables" : "", jstr(v, "name") ? jstr(v, "name") : "?",
                jstr(v, "value") ? jstr(v, "value") : "");
    }
}
