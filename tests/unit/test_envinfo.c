/* Unit tests of the environment capture (src/result/envinfo/): the parsers on fixed texts
 * (os-release, cpuinfo of x86 and ARM, sizes, CPU lists), the variable filter, BLAS thread
 * rules, git state in a temporary repository, a capture of a fake /proc-/sys-/etc tree, a
 * capture of this machine checked against /proc/cpuinfo and sysconf, and GPUs through the fake
 * NVML library (FAKE_NVML_PATH, as an environment variable or compile definition; skipped
 * without it), whose facts the nvml source gives as mlbench env opens it. The typed facts the
 * capture hands a run (machine_facts) are checked against the document it writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "measure/sampler.h"
#include "result/envinfo.h"

/* ---------------------------------------------------------------- helpers */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The value at a dotted path ("cpu.model"), or NULL. */
static const json_t *get_at(const json_t *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = o;
    char *save = NULL;
    for (const char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return v;
}

static const char *str_at(const json_t *o, const char *path)
{
    return json_string_value(get_at(o, path));
}

static long long int_at(const json_t *o, const char *path)
{
    const json_t *v = get_at(o, path);
    if (!json_is_integer(v))
        fail_msg("%s is not an integer", path);
    return (long long)json_integer_value(v);
}

/* The typed facts m say what the document env records, field by field (a fact unknown: the
 * field absent). */
static void assert_facts_recorded(const struct machine_facts *m, const json_t *env)
{
    const char *s = str_at(env, "hostname");
    assert_string_equal(m->hostname, s ? s : "");
    s = str_at(env, "cpu.model");
    assert_string_equal(m->cpu_model, s ? s : "");
    const json_t *features = get_at(env, "cpu.features");
    assert_int_equal(m->n_cpu_features, json_array_size(features));
    for (size_t i = 0; i < m->n_cpu_features; i++)
        assert_string_equal(m->cpu_features[i], json_string_value(json_array_get(features, i)));
    assert_string_equal(m->container, str_at(env, "virtualization.container"));
    assert_string_equal(m->vm, str_at(env, "virtualization.vm"));
    const json_t *gpus = json_object_get(env, "gpus");
    assert_int_equal(m->sources.n_gpus, json_array_size(gpus));
    s = str_at(env, "gpu_driver");
    assert_string_equal(m->sources.gpu_driver, s ? s : "");
    for (size_t i = 0; i < m->sources.n_gpus; i++) {
        const struct gpu_facts *g = &m->sources.gpus[i];
        const json_t *o = json_array_get(gpus, i);
        assert_int_equal(g->index, int_at(o, "index"));
        assert_int_equal(g->usable, json_is_true(json_object_get(o, "usable")));
        s = str_at(o, "name");
        assert_string_equal(g->name, s ? s : "");
        s = str_at(o, "uuid");
        assert_string_equal(g->uuid, s ? s : "");
        char cc[32] = "";
        if (g->cc_major >= 0 && g->cc_minor >= 0)
            snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
        s = str_at(o, "compute_capability");
        assert_string_equal(cc, s ? s : "");
        const json_t *hz = json_object_get(o, "sm_clock_max_hertz");
        assert_true(hz ? g->sm_clock_max_hertz == json_number_value(hz)
                       : isnan(g->sm_clock_max_hertz));
        const json_t *bytes = json_object_get(o, "memory_bytes");
        assert_true(bytes ? g->memory_bytes == json_number_value(bytes)
                          : !(g->memory_bytes > 0));
        const json_t *gpm = json_object_get(o, "gpm");
        assert_true(gpm ? g->usable && g->gpm == json_is_true(gpm) : !g->usable);
    }
}

static void write_file(const char *root, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", root, rel);
    /* mkdir -p of the parent */
    for (char *s = path + strlen(root) + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", path, strerror(errno));
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static char *make_tmpdir(void)
{
    char *dir = strdup("/tmp/test_envinfo.XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static bool has_string(const json_t *array, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v) {
        if (json_string_value(v) && !strcmp(json_string_value(v), s))
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- parsers */

static void test_os_release(void **state)
{
    (void)state;
    const char *text = "# comment\n"
                       "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
                       "NAME='Debian GNU/Linux'\n"
                       "VERSION_ID=\"12\"\n"
                       "VERSION=\"12 \\\"bookworm\\\"\"\n"
                       "ID=debian\n"
                       "HOME_URL=\"https://www.debian.org/\"\n"
                       "VERSION_CODENAME=bookworm";
    json_t *o = envinfo_parse_os_release(text);
    assert_non_null(o);
    assert_string_equal(str_at(o, "pretty_name"), "Debian GNU/Linux 12 (bookworm)");
    assert_string_equal(str_at(o, "name"), "Debian GNU/Linux");
    assert_string_equal(str_at(o, "version_id"), "12");
    assert_string_equal(str_at(o, "version"), "12 \"bookworm\"");
    assert_string_equal(str_at(o, "id"), "debian");
    assert_null(json_object_get(o, "home_url"));
    json_decref(o);

    assert_null(envinfo_parse_os_release(""));
    assert_null(envinfo_parse_os_release("FOO=bar\nID=\n"));
}

/* 2 sockets x 2 cores x 2 threads, x86 layout. */
static char *x86_cpuinfo(void)
{
    char *buf = calloc(1, 16384);
    assert_non_null(buf);
    size_t len = 0;
    for (int p = 0; p < 8; p++) {
        int socket = p / 4, core = (p / 2) % 2;
        len += (size_t)snprintf(
            buf + len, 16384 - len,
            "processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
            "model name\t: Intel(R) Xeon(R) Platinum 8480+\ncpu MHz\t\t: 2000.000\n"
            "cache size\t: 107520 KB\nphysical id\t: %d\nsiblings\t: 4\ncore id\t\t: %d\n"
            "cpu cores\t: 2\nflags\t\t: fpu sse4_2 avx avx2 fma avx512fx avx512bw amx_bf16 "
            "amx_tile hypervisor\n\n",
            p, socket, core);
    }
    return buf;
}

/* What x86_cpuinfo() describes. */
static void assert_x86_cpu(const json_t *cpu)
{
    assert_string_equal(str_at(cpu, "vendor"), "GenuineIntel");
    assert_string_equal(str_at(cpu, "model"), "Intel(R) Xeon(R) Platinum 8480+");
    assert_int_equal(int_at(cpu, "sockets"), 2);
    assert_int_equal(int_at(cpu, "cores"), 4);
    assert_int_equal(int_at(cpu, "threads"), 8);
}

static void test_cpuinfo_x86(void **state)
{
    (void)state;
    char *text = x86_cpuinfo();
    json_t *o = envinfo_parse_cpuinfo(text, NULL);
    assert_x86_cpu(o);
    const json_t *f = json_object_get(o, "features");
    assert_true(has_string(f, "avx2"));
    assert_true(has_string(f, "amx_bf16"));
    assert_true(has_string(f, "amx_tile"));
    assert_true(has_string(f, "sse4_2"));
    assert_false(has_string(f, "avx512f")); /* "avx512fx" is another word */
    assert_false(has_string(f, "hypervisor"));
    /* fixed order: the table's, not the line's */
    assert_string_equal(json_string_value(json_array_get(f, 0)), "sse4_2");
    json_decref(o);
    free(text);
}

static void test_cpuinfo_arm(void **state)
{
    (void)state;
    const char *text = "processor\t: 0\nBogoMIPS\t: 2000.00\n"
                       "Features\t: fp asimd evtstrm aes sve asimddp sve2 bf16 i8mm\n"
                       "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
                       "CPU part\t: 0xd4f\nCPU revision\t: 0\n\n"
                       "processor\t: 1\nBogoMIPS\t: 2000.00\n"
                       "Features\t: fp asimd evtstrm aes sve asimddp sve2 bf16 i8mm\n"
                       "CPU implementer\t: 0x41\nCPU part\t: 0xd4f\n";
    json_t *o = envinfo_parse_cpuinfo(text, NULL);
    assert_string_equal(str_at(o, "vendor"), "ARM");
    assert_string_equal(str_at(o, "model"), "Neoverse-V2");
    assert_int_equal(int_at(o, "threads"), 2);
    assert_null(json_object_get(o, "sockets")); /* cpuinfo does not say on ARM */
    assert_null(json_object_get(o, "cores"));
    const json_t *f = json_object_get(o, "features");
    assert_true(has_string(f, "asimd") && has_string(f, "sve2") && has_string(f, "i8mm"));
    assert_false(has_string(f, "avx2"));
    json_decref(o);

    o = envinfo_parse_cpuinfo("processor : 0\nCPU implementer : 0x41\nCPU part : 0xfff\n", NULL);
    assert_string_equal(str_at(o, "model"), "implementer 0x41 part 0xfff");
    json_decref(o);

    o = envinfo_parse_cpuinfo("", NULL);
    assert_int_equal(json_object_size(o), 0);
    json_decref(o);
}

static void test_sizes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t bytes;
    } sizes[] = {
        {"48K", 48 * 1024},           {"1024K\n", 1024 * 1024},   {"32768K", 32 << 20},
        {"1024 KB", 1024 * 1024},     {"       24684092 kB", 24684092LL * 1024},
        {"32M", 32 << 20},            {"2G", 2LL << 30},           {"1 MiB", 1 << 20},
        {"512", 512},                 {"0", 0},                    {"", -1},
        {"K", -1},                    {"-5", -1},                  {"12Q", -1},
        {"12K junk", -1},             {"99999999999999999999K", -1},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (envinfo_parse_size(sizes[i].text) != sizes[i].bytes)
            fail_msg("size \"%s\": %lld, expected %lld", sizes[i].text,
                     (long long)envinfo_parse_size(sizes[i].text), (long long)sizes[i].bytes);
    assert_int_equal(envinfo_parse_size(NULL), -1);

    static const struct {
        const char *text;
        int cpus;
    } lists[] = {
        {"0-3,8,10-11\n", 7}, {"0", 1}, {"0-1", 2}, {"", -1},
        {"3-1", -1},          {"a", -1}, {"1-", -1}, {"1;2", -1},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (envinfo_count_cpu_list(lists[i].text) != lists[i].cpus)
            fail_msg("list \"%s\": %d, expected %d", lists[i].text,
                     envinfo_count_cpu_list(lists[i].text), lists[i].cpus);
}

/* ---------------------------------------------------------------- variables, BLAS */

static void test_variable_filter(void **state)
{
    (void)state;
    static const char *const yes[] = {
        "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
        "CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "TF_CPP_MIN_LOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS",
        "PYTORCH_CUDA_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG", "CUDNN_LOGINFO_DBG",
        "TORCH_CUDNN_V8_API_ENABLED", "XLA_FLAGS", "MALLOC_ARENA_MAX", "LD_PRELOAD",
        "KMP_AFFINITY", "GOTO_NUM_THREADS", "MKL_KEYBOARD", "NVIDIA_TF32_OVERRIDE",
    };
    static const char *const no[] = {
        "HOME", "PATH", "OMP_", "LD_PRELOADX", "HF_TOKEN", "NCCL_API_KEY", "TORCH_SECRET",
        "CUDA_PASSWORD", "XLA_KEYS", "TF_VAR_region", "TF_CLI_CONFIG_FILE", "TF_LOG", "",
        "MY_OMP_NUM_THREADS",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!envinfo_variable_recorded(yes[i]))
            fail_msg("%s should be recorded", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (envinfo_variable_recorded(no[i]))
            fail_msg("%s should not be recorded", no[i]);
    assert_false(envinfo_variable_recorded(NULL));

    char *envp[] = {"PATH=/bin", "OMP_NUM_THREADS=8", "NCCL_DEBUG=INFO", "HF_TOKEN=hf_x",
                    "CUDA_VISIBLE_DEVICES=", "LD_PRELOAD=/a b.so=x", "TF_XLA_FLAGS=\xff\xfe",
                    "=weird", "NOEQUALS", NULL};
    json_t *a = envinfo_variables(envp);
    assert_int_equal(json_array_size(a), 5);
    const char *names[] = {"CUDA_VISIBLE_DEVICES", "LD_PRELOAD", "NCCL_DEBUG", "OMP_NUM_THREADS",
                           "TF_XLA_FLAGS"};
    const char *values[] = {"", "/a b.so=x", "INFO", "8", "??"};
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(str_at(json_array_get(a, i), "name"), names[i]);
        assert_string_equal(str_at(json_array_get(a, i), "value"), values[i]);
    }
    json_decref(a);

    char *none[] = {NULL};
    a = envinfo_variables(none);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
}

static void test_blas_threads(void **state)
{
    (void)state;
    const char *from;
    char *both[] = {"OPENBLAS_NUM_THREADS=4", "OMP_NUM_THREADS=8", "MKL_NUM_THREADS=2", NULL};
    assert_int_equal(envinfo_blas_threads("openblas-pthread", both, 64, 32, &from), 4);
    assert_string_equal(from, "OPENBLAS_NUM_THREADS");
    assert_int_equal(envinfo_blas_threads("openblas-openmp", both, 64, 32, &from), 8);
    assert_string_equal(from, "OMP_NUM_THREADS");
    assert_int_equal(envinfo_blas_threads("mkl", both, 64, 32, &from), 2);
    assert_string_equal(from, "MKL_NUM_THREADS");
    assert_int_equal(envinfo_blas_threads("openblas-serial", both, 64, 32, &from), 1);
    assert_string_equal(from, "single-threaded library");
    assert_int_equal(envinfo_blas_threads("reference", both, 64, 32, &from), 1);

    char *omp_list[] = {"OMP_NUM_THREADS=6,2", "OPENBLAS_NUM_THREADS=zero", NULL};
    assert_int_equal(envinfo_blas_threads("openblas-pthread", omp_list, 64, 32, &from), 6);
    assert_string_equal(from, "OMP_NUM_THREADS");
    assert_int_equal(envinfo_blas_threads("blis-pthread", omp_list, 64, 32, &from), 6);

    char *goto_only[] = {"GOTO_NUM_THREADS=3", "OPENBLAS_NUM_THREADS=0", NULL};
    assert_int_equal(envinfo_blas_threads("openblas", goto_only, 64, 32, &from), 3);
    assert_string_equal(from, "GOTO_NUM_THREADS");

    char *none[] = {"PATH=/bin", NULL};
    assert_int_equal(envinfo_blas_threads("openblas-pthread", none, 64, 32, &from), 64);
    assert_string_equal(from, "cpus");
    assert_int_equal(envinfo_blas_threads("mkl", none, 64, 32, &from), 32);
    assert_string_equal(from, "cores");
    assert_int_equal(envinfo_blas_threads("mkl", none, 64, -1, &from), 64);
    assert_string_equal(from, "cpus");
    assert_int_equal(envinfo_blas_threads("blis-pthread", none, 64, 32, &from), 1);
    assert_string_equal(from, "default");
    assert_int_equal(envinfo_blas_threads("atlas", none, 64, 32, &from), -1);
    assert_int_equal(envinfo_blas_threads(NULL, none, 64, 32, &from), -1);
    assert_int_equal(envinfo_blas_threads("openblas-pthread", none, -1, 32, &from), -1);
}

/* ---------------------------------------------------------------- git */

static bool have_git(void)
{
    return system("git --version >/dev/null 2>&1") == 0;
}

static void git_in(const char *dir, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main "
             "%s >/dev/null 2>&1",
             dir, args);
    if (system(cmd) != 0)
        fail_msg("failed: %s", cmd);
}

static void test_git(void **state)
{
    (void)state;
    if (!have_git())
        skip();
    char *dir = make_tmpdir();

    assert_null(envinfo_git(dir)); /* not a repository */
    git_in(dir, "init -q");
    assert_null(envinfo_git(dir)); /* no commit yet */

    write_file(dir, "/train.py", "print('x')\n");
    git_in(dir, "add train.py");
    git_in(dir, "commit -q -m first");
    char cmd[4200], head[64] = "";
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(head, sizeof head, p));
    pclose(p);
    head[strcspn(head, "\n")] = '\0';

    json_t *g = envinfo_git(dir);
    assert_non_null(g);
    assert_string_equal(str_at(g, "commit"), head);
    assert_string_equal(str_at(g, "branch"), "main");
    assert_true(json_is_false(json_object_get(g, "dirty")));
    assert_int_equal(int_at(g, "changed_files"), 0);
    json_decref(g);

    write_file(dir, "/untracked.log", "outputs do not count\n");
    g = envinfo_git(dir);
    assert_true(json_is_false(json_object_get(g, "dirty")));
    json_decref(g);

    write_file(dir, "/train.py", "print('changed')\n");
    g = envinfo_git(dir);
    assert_true(json_is_true(json_object_get(g, "dirty")));
    assert_int_equal(int_at(g, "changed_files"), 1);
    json_decref(g);

    git_in(dir, "commit -q -a -m second");
    git_in(dir, "checkout -q --detach");
    g = envinfo_git(dir);
    assert_non_null(g);
    assert_null(json_object_get(g, "branch"));
    assert_true(json_is_false(json_object_get(g, "dirty")));
    json_decref(g);

    /* a subdirectory of the work tree has the same state */
    write_file(dir, "/sub/x", "");
    snprintf(cmd, sizeof cmd, "%s/sub", dir);
    g = envinfo_git(cmd);
    assert_non_null(g);
    json_decref(g);

    remove_tree(dir);
    free(dir);
}

/* A git that hangs is killed after 2 s; a missing git gives no git state. */
static void test_git_timeout(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    write_file(dir, "/bin/git", "#!/bin/sh\nexec /bin/sleep 30\n");
    char bin[4200];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(bin + strlen(bin), sizeof bin - strlen(bin), "/git");
    assert_int_equal(chmod(bin, 0755), 0);
    bin[strlen(bin) - 4] = '\0';
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "/usr/bin:/bin");
    assert_non_null(saved);

    /* PATH is restored before anything is checked: the other tests need it */
    assert_int_equal(setenv("PATH", bin, 1), 0);
    int64_t t0 = mono_ns();
    json_t *hung = envinfo_git(dir);
    int64_t took = mono_ns() - t0;
    snprintf(bin + strlen(bin), sizeof bin - strlen(bin), "/none");
    assert_int_equal(setenv("PATH", bin, 1), 0); /* no git at all */
    json_t *missing = envinfo_git(dir);
    assert_int_equal(setenv("PATH", saved, 1), 0);
    free(saved);

    assert_null(hung);
    if (took < 1900000000LL || took > 5000000000LL)
        fail_msg("a hung git was waited for %.2f s, not 2 s", (double)took / 1e9);
    assert_null(missing);
    remove_tree(dir);
    free(dir);
}

/* ---------------------------------------------------------------- captures */

/* A whole machine as files under a temporary root. */
static void test_capture_fake_root(void **state)
{
    (void)state;
    char *root = make_tmpdir();
    struct utsname u;
    assert_int_equal(uname(&u), 0);

    char *cpuinfo = x86_cpuinfo();
    write_file(root, "/proc/cpuinfo", cpuinfo);
    free(cpuinfo);
    write_file(root, "/etc/os-release", "PRETTY_NAME=\"Test OS 1\"\nID=testos\n");
    write_file(root, "/proc/meminfo", "MemTotal:       1024 kB\nMemFree: 12 kB\nSwapTotal: 0 kB\n");
    write_file(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
    write_file(root, "/sys/devices/system/node/node0/cpulist", "0-3\n");
    write_file(root, "/sys/devices/system/node/node1/cpulist", "4-7\n");
    const char *cache = "/sys/devices/system/cpu/cpu0/cache";
    char path[512];
    static const char *const levels[] = {"1", "1", "2", "3"};
    static const char *const types[] = {"Data", "Instruction", "Unified", "Unified"};
    static const char *const sizes[] = {"48K", "32K", "2048K", "105M"};
    static const char *const shared[] = {"0,4", "0,4", "0,4", "0-3,8-11"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/index%d/level", cache, i);
        write_file(root, path, levels[i]);
        snprintf(path, sizeof path, "%s/index%d/type", cache, i);
        write_file(root, path, types[i]);
        snprintf(path, sizeof path, "%s/index%d/size", cache, i);
        write_file(root, path, sizes[i]);
        snprintf(path, sizeof path, "%s/index%d/shared_cpu_list", cache, i);
        write_file(root, path, shared[i]);
    }
    const char *freq = "/sys/devices/system/cpu/cpufreq";
    for (int p = 0; p < 2; p++) {
        snprintf(path, sizeof path, "%s/policy%d/scaling_governor", freq, p);
        write_file(root, path, p ? "powersave\n" : "performance\n");
        snprintf(path, sizeof path, "%s/policy%d/scaling_driver", freq, p);
        write_file(root, path, "intel_pstate\n");
        snprintf(path, sizeof path, "%s/policy%d/cpuinfo_min_freq", freq, p);
        write_file(root, path, "800000\n");
        snprintf(path, sizeof path, "%s/policy%d/cpuinfo_max_freq", freq, p);
        write_file(root, path, p ? "3500000\n" : "3800000\n");
        snprintf(path, sizeof path, "%s/policy%d/scaling_min_freq", freq, p);
        write_file(root, path, "1200000\n");
        snprintf(path, sizeof path, "%s/policy%d/scaling_max_freq", freq, p);
        write_file(root, path, "3000000\n");
    }
    write_file(root, "/sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
    write_file(root, "/.dockerenv", "");
    write_file(root, "/sys/class/dmi/id/sys_vendor", "QEMU\n");
    write_file(root, "/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
    write_file(root, "/proc/self/cgroup", "0::/a/b\n");
    write_file(root, "/sys/fs/cgroup/a/cpu.max", "200000 100000\n");
    write_file(root, "/sys/fs/cgroup/a/b/cpu.max", "max 100000\n");
    write_file(root, "/sys/fs/cgroup/a/b/memory.max", "1073741824\n");
    write_file(root, "/sys/fs/cgroup/a/memory.max", "max\n");
    char alt_dir[4200], link[4300];
    snprintf(alt_dir, sizeof alt_dir, "%s/etc/alternatives", root);
    assert_int_equal(mkdir(alt_dir, 0755), 0);
    snprintf(link, sizeof link, "%s/libblas.so.3-%s-linux-gnu", alt_dir, u.machine);
    assert_int_equal(symlink("/usr/lib/x-linux-gnu/openblas-pthread/libblas.so.3", link), 0);
    snprintf(link, sizeof link, "%s/libopenblas.so.0-%s-linux-gnu", alt_dir, u.machine);
    assert_int_equal(symlink("/usr/lib/x-linux-gnu/openblas-openmp/libopenblas.so.0", link), 0);
    snprintf(link, sizeof link, "%s/liblapack.so.3-%s-linux-gnu", alt_dir, u.machine);
    assert_int_equal(symlink("/usr/lib/x-linux-gnu/lapack/liblapack.so.3", link), 0);

    char *envp[] = {"OPENBLAS_NUM_THREADS=3", "OMP_NUM_THREADS=5", "OPENBLAS_CORETYPE=Haswell",
                    "HOME=/root", NULL};
    struct envinfo_options opt = {.root = root, .no_git = true, .envp = envp};
    struct machine_facts facts;
    json_t *env = envinfo_capture(&opt, &facts);

    assert_string_equal(str_at(env, "os.pretty_name"), "Test OS 1");
    assert_x86_cpu(json_object_get(env, "cpu"));
    const json_t *caches = get_at(env, "cpu.caches");
    assert_int_equal(json_array_size(caches), 4);
    assert_string_equal(str_at(json_array_get(caches, 0), "name"), "L1d");
    assert_string_equal(str_at(json_array_get(caches, 1), "name"), "L1i");
    assert_string_equal(str_at(json_array_get(caches, 3), "name"), "L3");
    assert_int_equal(int_at(json_array_get(caches, 3), "size_bytes"), 105LL << 20);
    assert_int_equal(int_at(json_array_get(caches, 3), "shared_by_cpus"), 8);
    assert_int_equal(int_at(json_array_get(caches, 0), "shared_by_cpus"), 2);
    const char *gov = str_at(env, "cpu.governor");
    assert_non_null(gov);
    assert_true(!strcmp(gov, "performance,powersave") || !strcmp(gov, "powersave,performance"));
    assert_string_equal(str_at(env, "cpu.frequency_driver"), "intel_pstate");
    assert_true(json_real_value(get_at(env, "cpu.min_mhz")) == 800.0);
    assert_true(json_real_value(get_at(env, "cpu.max_mhz")) == 3800.0);
    assert_true(json_real_value(get_at(env, "cpu.scaling_min_mhz")) == 1200.0);
    assert_true(json_real_value(get_at(env, "cpu.scaling_max_mhz")) == 3000.0);
    assert_true(json_is_false(get_at(env, "cpu.boost")));
    assert_int_equal(int_at(env, "memory.total_bytes"), 1024 * 1024);
    assert_int_equal(int_at(env, "memory.swap_bytes"), 0);
    assert_string_equal(str_at(env, "memory.transparent_hugepages"), "never");
    assert_int_equal(int_at(env, "memory.numa_nodes"), 2);
    /* the parent's quota limits the child whose own is "max" */
    assert_true(json_real_value(get_at(env, "cgroup.cpu_limit_cores")) == 2.0);
    assert_int_equal(int_at(env, "cgroup.memory_limit_bytes"), 1LL << 30);
    assert_string_equal(str_at(env, "blas.library"),
                        "/usr/lib/x-linux-gnu/openblas-pthread/libblas.so.3");
    assert_string_equal(str_at(env, "blas.provider"), "openblas-pthread");
    assert_int_equal(int_at(env, "blas.threads"), 3);
    assert_string_equal(str_at(env, "blas.threads_from"), "OPENBLAS_NUM_THREADS");
    assert_string_equal(str_at(env, "blas.lapack_library"),
                        "/usr/lib/x-linux-gnu/lapack/liblapack.so.3");
    assert_string_equal(str_at(env, "blas.openblas_provider"), "openblas-openmp");
    assert_int_equal(int_at(env, "blas.openblas_threads"), 5);
    assert_string_equal(str_at(env, "blas.openblas_threads_from"), "OMP_NUM_THREADS");
    assert_string_equal(str_at(env, "blas.openblas_coretype"), "Haswell");
    assert_string_equal(str_at(env, "virtualization.container"), "docker");
    assert_string_equal(str_at(env, "virtualization.vm"), "qemu");
    assert_true(has_string(get_at(env, "virtualization.evidence"), "/.dockerenv exists"));
    const json_t *vars = get_at(env, "variables");
    assert_int_equal(json_array_size(vars), 3); /* not HOME */
    assert_null(json_object_get(env, "git"));
    assert_null(json_object_get(env, "gpus")); /* no nvml source open, none asked for */
    /* the facts a run reads are those the document records */
    assert_facts_recorded(&facts, env);
    assert_string_equal(facts.cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
    assert_true(machine_facts_cpu_has(&facts, "amx_bf16"));
    assert_false(machine_facts_cpu_has(&facts, "avx512f"));
    assert_string_equal(facts.vm, "qemu");
    assert_int_equal(facts.sources.n_gpus, 0);
    machine_facts_free(&facts);
    assert_string_equal(str_at(env, "build.version"), MLBENCH_VERSION);
    assert_non_null(str_at(env, "build.compiler"));
    assert_non_null(str_at(env, "build.flags"));
    assert_non_null(str_at(env, "build.type"));

    /* the text names what matters */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    envinfo_print(out, env);
    fclose(out);
    assert_non_null(strstr(text, "Intel(R) Xeon(R) Platinum 8480+"));
    assert_non_null(strstr(text, "8 threads"));
    assert_non_null(strstr(text, "governor performance,powersave") ?
                        strstr(text, "governor performance,powersave") : strstr(text, "governor powersave,performance"));
    assert_non_null(strstr(text, "OPENBLAS_NUM_THREADS=3"));
    assert_non_null(strstr(text, "Haswell"));
    assert_non_null(strstr(text, "container docker"));
    free(text);
    json_decref(env);

    /* an empty root: only what does not come from files */
    char *empty = make_tmpdir();
    struct envinfo_options bare = {.root = empty, .no_git = true, .envp = envp};
    env = envinfo_capture(&bare, &facts);
    assert_null(json_object_get(env, "cpu"));
    assert_null(json_object_get(env, "memory"));
    assert_null(json_object_get(env, "os"));
    assert_null(get_at(env, "blas.library"));
    assert_string_equal(str_at(env, "virtualization.container"), "none");
    assert_string_equal(str_at(env, "virtualization.vm"), "none");
    assert_non_null(json_object_get(env, "hostname"));
    assert_facts_recorded(&facts, env);
    assert_string_equal(facts.cpu_model, "");
    machine_facts_free(&facts);
    /* the text of an object with fields missing still prints */
    out = open_memstream(&text, &len);
    envinfo_print(out, env);
    fclose(out);
    assert_non_null(strstr(text, "cpu"));
    free(text);
    json_decref(env);
    /* and of an empty object */
    json_t *nothing = json_object();
    out = open_memstream(&text, &len);
    envinfo_print(out, nothing);
    fclose(out);
    free(text);
    json_decref(nothing);

    remove_tree(empty);
    free(empty);
    remove_tree(root);
    free(root);
}

/* This machine, checked against /proc/cpuinfo and sysconf. */
static void test_capture_machine(void **state)
{
    (void)state;
    int64_t t0 = mono_ns();
    struct envinfo_options opt = {.no_git = true};
    struct machine_facts facts;
    json_t *env = envinfo_capture(&opt, &facts);
    int64_t took = mono_ns() - t0;
    assert_non_null(env);
    assert_true(json_is_object(env));
    assert_int_equal(int_at(env, "cpus_online"), sysconf(_SC_NPROCESSORS_ONLN));

    FILE *f = fopen("/proc/cpuinfo", "r");
    assert_non_null(f);
    char line[4096], model[256] = "";
    long processors = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "processor", 9))
            processors++;
        if (!strncmp(line, "model name", 10) && !model[0]) {
            const char *v = strchr(line, ':') + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(model, sizeof model, "%s", v);
            model[strcspn(model, "\n")] = '\0';
            for (size_t n = strlen(model); n > 0 && model[n - 1] == ' ';)
                model[--n] = '\0';
        }
    }
    fclose(f);
    if (model[0])
        assert_string_equal(str_at(env, "cpu.model"), model);
    assert_int_equal(int_at(env, "cpu.threads"), processors);
    assert_non_null(str_at(env, "virtualization.container"));
    assert_true(json_is_array(json_object_get(env, "variables")));
    assert_facts_recorded(&facts, env);
    machine_facts_free(&facts);
    /* fast: well under 50 ms without git (a loaded CI machine gets slack) */
    if (took > 200000000)
        fail_msg("capture took %.1f ms", (double)took / 1e6);
    json_decref(env);

    /* defaults: NULL options */
    env = envinfo_capture(NULL, NULL);
    assert_non_null(json_object_get(env, "hostname"));
    json_decref(env);
}

/* The fake NVML: $FAKE_NVML_PATH, the compile definition, or fakes/libfake_nvml.so beside this
 * test's executable (where tests/CMakeLists.txt builds them both). */
static const char *fake_nvml_path(void)
{
    const char *env = getenv("FAKE_NVML_PATH");
    if (env && *env)
        return env;
#ifdef FAKE_NVML_PATH
    return FAKE_NVML_PATH;
#else
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    if (n <= 0)
        return NULL;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash)
        return NULL;
    strcpy(slash, "/fakes/libfake_nvml.so");
    return access(path, R_OK) == 0 ? path : NULL;
#endif
}

/* The capture as mlbench env makes it: the nvml source opened for its facts alone
 * (sampler_source_facts), gpu_error when it could not open; the typed facts into *facts. */
static json_t *capture_with_nvml(struct envinfo_options *opt, struct machine_facts *facts)
{
    char err[512];
    struct source_facts sources;
    opt->gpu_error = sampler_source_facts("nvml", &sources, err, sizeof err) == 0 ? NULL : err;
    opt->sources = &sources;
    json_t *env = envinfo_capture(opt, facts);
    source_facts_free(&sources);
    opt->sources = NULL;
    opt->gpu_error = NULL;
    return env;
}

/* GPUs: through the fake NVML, the nvml source opened for the capture and closed after. */
static void test_capture_gpus(void **state)
{
    (void)state;
    struct envinfo_options opt = {.no_git = true};

    assert_int_equal(setenv("MLBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1), 0);
    struct machine_facts facts;
    json_t *env = capture_with_nvml(&opt, &facts);
    assert_null(json_object_get(env, "gpus"));
    assert_non_null(strstr(str_at(env, "gpu_error"), "not found"));
    assert_int_equal(facts.sources.n_gpus, 0);
    machine_facts_free(&facts);
    json_decref(env);

    const char *fake = fake_nvml_path();
    if (!fake) {
        unsetenv("MLBENCH_NVML_LIBRARY");
        skip();
    }
    char script[] = "/tmp/test_envinfo_nvml.XXXXXX";
    int fd = mkstemp(script);
    assert_true(fd >= 0);
    const char *text = "devices 2\nname 0 NVIDIA H200\nuuid 0 GPU-0000\ncc 0 9 0\n"
                       "mem_total 0 150000000000\nmem_used 0 1000000\ndriver 580.65.06\nhandle 1 ERR_NO_PERMISSION\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(setenv("MLBENCH_NVML_LIBRARY", fake, 1), 0);
    assert_int_equal(setenv("FAKE_NVML_SCRIPT", script, 1), 0);
    /* the test's own reference: the same loaded library as the source's, to count its calls */
    void *lib = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    unsigned long (*calls)(const char *) =
        (unsigned long (*)(const char *))dlsym(lib, "fake_nvml_calls");
    assert_non_null(calls);

    env = capture_with_nvml(&opt, &facts);
    const json_t *gpus = json_object_get(env, "gpus");
    assert_int_equal(json_array_size(gpus), 2);
    const json_t *g0 = json_array_get(gpus, 0), *g1 = json_array_get(gpus, 1);
    assert_string_equal(str_at(g0, "name"), "NVIDIA H200");
    assert_string_equal(str_at(g0, "uuid"), "GPU-0000");
    assert_string_equal(str_at(g0, "compute_capability"), "9.0");
    assert_int_equal(int_at(g0, "memory_bytes"), 150000000000LL);
    assert_true(json_is_true(json_object_get(g0, "usable")));
    assert_int_equal(int_at(g1, "index"), 1);
    assert_true(json_is_false(json_object_get(g1, "usable")));
    assert_null(json_object_get(g1, "name"));
    assert_string_equal(str_at(env, "gpu_driver"), "580.65.06");
    assert_null(json_object_get(env, "gpu_error"));
    /* the facts a run reads are those the document records, the unusable GPU's unknown */
    assert_facts_recorded(&facts, env);
    assert_string_equal(facts.sources.gpus[0].name, "NVIDIA H200");
    assert_int_equal(facts.sources.gpus[0].cc_major, 9);
    assert_false(facts.sources.gpus[1].usable);
    assert_string_equal(facts.sources.gpus[1].name, "");
    assert_int_equal(facts.sources.gpus[1].cc_major, -1);
    machine_facts_free(&facts);
    json_decref(env);
    assert_int_equal(calls("nvmlShutdown"), calls("nvmlInit_v2")); /* closed after the capture */
    assert_int_equal(calls("nvmlShutdown"), 1);
    dlclose(lib);

    /* without the sources' facts: no GPU and no reason (results get it elsewhere) */
    env = envinfo_capture(&opt, NULL);
    assert_null(json_object_get(env, "gpus"));
    assert_null(json_object_get(env, "gpu_error"));
    json_decref(env);

    unlink(script);
    unsetenv("MLBENCH_NVML_LIBRARY");
    unsetenv("FAKE_NVML_SCRIPT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_os_release),
        cmocka_unit_test(test_cpuinfo_x86),
        cmocka_unit_test(test_cpuinfo_arm),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_variable_filter),
        cmocka_unit_test(test_blas_threads),
        cmocka_unit_test(test_git),
        cmocka_unit_test(test_git_timeout),
        cmocka_unit_test(test_capture_fake_root),
        cmocka_unit_test(test_capture_machine),
        cmocka_unit_test(test_capture_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
