/* envinfo/capture.c: envinfo_capture, which assembles the environment from its aspects (one
 * file each beside this one: cpu, limits, blas, virt, vars, git, python, build), plus what
 * needs no file of its own: host name, CPUs online and allowed, kernel (uname), distribution
 * (os-release), libc, and the GPUs the metric sources found (their facts). The facts a run
 * reads (host name, CPU model and extensions, virtual machine, GPUs) are read into the typed
 * facts (machine_facts.h) and written into the document from there. */
#include "result/envinfo/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

extern char **environ;

static const char *root_of(const struct envinfo_options *opt)
{
    return opt && opt->root ? opt->root : "";
}

/* Adds o under key when it has any field, else drops it. */
static void set_object(json_t *parent, const char *key, json_t *o)
{
    if (o && json_object_size(o) > 0)
        json_object_set_new(parent, key, o);
    else
        json_decref(o);
}

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
                    envinfo_set_text(o, wanted[i].key, value);
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

/* One GPU's object of `gpus`: what is known of it (docs/environment.md#gpus). */
static json_t *gpu_json(const struct gpu_facts *f)
{
    json_t *g = json_pack("{s:I, s:b}", "index", (json_int_t)f->index, "usable", f->usable);
    envinfo_set_text(g, "name", f->name);
    envinfo_set_text(g, "uuid", f->uuid);
    if (isfinite(f->memory_bytes) && f->memory_bytes > 0)
        json_object_set_new(g, "memory_bytes", json_integer((json_int_t)f->memory_bytes));
    if (f->cc_major >= 0 && f->cc_minor >= 0)
        json_object_set_new(g, "compute_capability",
                            json_sprintf("%d.%d", f->cc_major, f->cc_minor));
    if (isfinite(f->sm_clock_max_hertz))
        json_object_set_new(g, "sm_clock_max_hertz",
                            json_integer((json_int_t)f->sm_clock_max_hertz));
    if (f->usable)
        json_object_set_new(g, "gpm", json_boolean(f->gpm));
    return g;
}

/* The GPUs of the metric sources' facts (sources: see envinfo_options; NULL: none) into
 * m->sources, their texts as the environment records them, and from there into env: gpus and
 * gpu_driver; or gpu_error saying why there are none, when the caller knows. */
static void gpus_capture(json_t *env, struct machine_facts *m, const struct source_facts *sources,
                         const char *gpu_error)
{
    if (sources) {
        source_facts_copy(&m->sources, sources);
        envinfo_copy_text(m->sources.gpu_driver, sizeof m->sources.gpu_driver,
                          sources->gpu_driver);
        for (size_t i = 0; i < m->sources.n_gpus; i++) {
            struct gpu_facts *g = &m->sources.gpus[i];
            envinfo_copy_text(g->name, sizeof g->name, sources->gpus[i].name);
            envinfo_copy_text(g->uuid, sizeof g->uuid, sources->gpus[i].uuid);
        }
    }
    if (m->sources.n_gpus > 0) {
        json_t *gpus = json_array();
        for (size_t i = 0; i < m->sources.n_gpus; i++)
            json_array_append_new(gpus, gpu_json(&m->sources.gpus[i]));
        json_object_set_new(env, "gpus", gpus);
        envinfo_set_text(env, "gpu_driver", m->sources.gpu_driver);
    } else if (gpu_error) {
        envinfo_set_text(env, "gpu_error", *gpu_error ? gpu_error : "NVML could not be opened");
    }
}

json_t *envinfo_capture(const struct envinfo_options *opt, struct machine_facts *facts)
{
    /* Each fact is read into m and written into the document from there. */
    struct machine_facts own, *m = facts ? facts : &own;
    memset(m, 0, sizeof *m);
    const char *root = root_of(opt);
    char *const *envp = opt && opt->envp ? opt->envp : environ;
    json_t *env = json_object();

    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0) {
        envinfo_copy_text(m->hostname, sizeof m->hostname, host);
        envinfo_set_text(env, "hostname", m->hostname);
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0)
        envinfo_set_int(env, "cpus_online", online);
    int allowed = envinfo_cpus_allowed();
    if (allowed > 0)
        envinfo_set_int(env, "cpus_allowed", allowed);
    struct utsname u;
    bool have_uname = uname(&u) == 0;
    if (have_uname) {
        json_object_set_new(env, "kernel", json_sprintf("%s %s", u.sysname, u.release));
        envinfo_set_text(env, "kernel_build", u.version);
        envinfo_set_text(env, "machine", u.machine);
    }

    char *os_text = envinfo_read_file(root, "/etc/os-release");
    if (!os_text)
        os_text = envinfo_read_file(root, "/usr/lib/os-release");
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
    json_object_set_new(env, "build", envinfo_build());

    struct cpuinfo_facts cpu;
    set_object(env, "cpu", envinfo_cpu(root, envp, &cpu));
    envinfo_cpu_machine_facts(&cpu, m);
    set_object(env, "memory", envinfo_memory(root));
    set_object(env, "cgroup", envinfo_cgroup(root, m));
    set_object(env, "blas", envinfo_blas(root, have_uname ? u.machine : NULL, envp,
                                      allowed > 0 ? allowed : (int)online, cpu.cores));
    gpus_capture(env, m, opt ? opt->sources : NULL, opt ? opt->gpu_error : NULL);
    json_t *virt = envinfo_virtualization(root, &cpu, envp, have_uname ? u.release : NULL, m);
    json_object_set_new(env, "virtualization", virt);
    json_object_set_new(env, "variables", envinfo_variables(envp));
    /* Only when asked: starting an interpreter costs 20 ms to a second on a loaded machine. */
    json_t *python = opt && opt->python ? envinfo_python(root, opt->python, envp) : NULL;
    if (python)
        json_object_set_new(env, "python", python);
    if (!(opt && opt->no_git)) {
        json_t *git = envinfo_git(opt ? opt->git_dir : NULL);
        if (git)
            json_object_set_new(env, "git", git);
    }
    if (!facts)
        machine_facts_free(&own);
    return env;
}
