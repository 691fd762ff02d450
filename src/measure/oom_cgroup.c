/* oom_cgroup: the OOM-kill count of a process's memory cgroup (see oom_cgroup.h). */
#include "measure/oom_cgroup.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of the line "oom_kill N" of a flat-keyed cgroup file, or -1. */
static long read_oom_kill(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    long n = -1;
    while (fgets(line, sizeof line, f)) {
        char *end;
        if (strncmp(line, "oom_kill ", 9) != 0)
            continue;
        long v = strtol(line + 9, &end, 10);
        if (end != line + 9 && v >= 0 && (*end == '\n' || *end == '\0'))
            n = v;
        break;
    }
    fclose(f);
    return n;
}

/* read_oom_kill of sys_root/fs/cgroup<mount>/<cg_path>/file. */
static long read_at(const char *sys_root, const char *mount, const char *cg_path,
                    const char *file)
{
    char path[PATH_MAX];
    const char *sep = *cg_path && cg_path[strlen(cg_path) - 1] == '/' ? "" : "/";
    if (snprintf(path, sizeof path, "%s/fs/cgroup%s%s%s%s", sys_root, mount, cg_path, sep,
                 file) >= (int)sizeof path)
        return -1;
    return read_oom_kill(path);
}

long oom_cgroup_kills_at(const char *proc_root, const char *sys_root, pid_t pid)
{
    char path[PATH_MAX], line[PATH_MAX + 64];
    if (pid > 0)
        snprintf(path, sizeof path, "%s/%ld/cgroup", proc_root, (long)pid);
    else
        snprintf(path, sizeof path, "%s/self/cgroup", proc_root);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v1 = -1, v2 = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH"; v2 is "0::PATH" */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        if (!*controllers) {
            v2 = read_at(sys_root, "", cg, "memory.events");
            if (v2 < 0)
                v2 = read_at(sys_root, "/unified", cg, "memory.events");
            continue;
        }
        char list[256];
        snprintf(list, sizeof list, ",%s,", controllers);
        if (strstr(list, ",memory,"))
            v1 = read_at(sys_root, "/memory", cg, "memory.oom_control");
    }
    fclose(f);
    return v1 >= 0 ? v1 : v2;
}

long oom_cgroup_kills(pid_t pid)
{
    const char *proc = getenv("MLBENCH_PROC_ROOT"), *sys = getenv("MLBENCH_SYS_ROOT");
    return oom_cgroup_kills_at(proc && *proc ? proc : "/proc", sys && *sys ? sys : "/sys", pid);
}
