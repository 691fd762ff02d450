/* envinfo/limits.c: the `memory` and `cgroup` objects of the environment: memory and swap
 * size, transparent hugepages and NUMA nodes, and the CPU and memory limits of this process's
 * cgroup (v2 cpu.max and memory.max, or the v1 cpu and memory controllers), the smallest along
 * its path since nested limits all apply. */
#include "result/envinfo/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

json_t *envinfo_memory(const char *root)
{
    json_t *o = json_object();
    char *text = envinfo_read_file(root, "/proc/meminfo");
    if (text) {
        envinfo_set_int(o, "total_bytes", meminfo_field(text, "MemTotal"));
        envinfo_set_int(o, "swap_bytes", meminfo_field(text, "SwapTotal"));
        free(text);
    }
    char thp[128];
    if (envinfo_read_line(root, "/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp)) {
        const char *open_b = strchr(thp, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;
        if (open_b && close_b) {
            char mode[32];
            snprintf(mode, sizeof mode, "%.*s", (int)(close_b - open_b - 1), open_b + 1);
            envinfo_set_text(o, "transparent_hugepages", mode);
        }
    }
    int nodes = count_numbered(root, "/sys/devices/system/node", "node");
    if (nodes > 0)
        envinfo_set_int(o, "numa_nodes", nodes);
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
    if (!envinfo_read_line(root, path, buf, sizeof buf) ||
        sscanf(buf, "%lf %lf", &quota, &period) != 2 ||
        period <= 0 || quota <= 0)
        return -1;
    return quota / period;
}

/* A byte count, "max", or the v1 "unlimited" (about 2^63 rounded to a page). */
static double bytes_value(const char *root, const char *path)
{
    int64_t v = envinfo_read_int(root, path);
    return v > 0 && v < (INT64_C(1) << 60) ? (double)v : -1;
}

/* cgroup v1 cpu.cfs_quota_us next to cpu.cfs_period_us, as cores. */
static double cfs_quota_value(const char *root, const char *path)
{
    int64_t quota = envinfo_read_int(root, path);
    char period_path[PATH_MAX];
    snprintf(period_path, sizeof period_path, "%.*s/cpu.cfs_period_us",
             (int)(strrchr(path, '/') - path), path);
    int64_t period = envinfo_read_int(root, period_path);
    return quota > 0 && period > 0 ? (double)quota / (double)period : -1;
}

/* CPU and memory limits of this process's cgroup (v2, or v1 cpu and memory controllers); the
 * CPU quota into m (cgroup_captured, cpu_limit_cores). */
json_t *envinfo_cgroup(const char *root, struct machine_facts *m)
{
    json_t *o = json_object();
    char *text = envinfo_read_file(root, "/proc/self/cgroup");
    if (!text)
        return o;
    m->cgroup_captured = true;
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
    m->cpu_limit_cores = cpu > 0 ? cpu : 0;
    if (cpu > 0)
        json_object_set_new(o, "cpu_limit_cores", json_real(cpu));
    if (mem > 0)
        envinfo_set_int(o, "memory_limit_bytes", (int64_t)mem);
    return o;
}
