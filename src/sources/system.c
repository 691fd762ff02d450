/* system: the "system" metric source, the host as a whole: CPU busy, iowait and steal ratios
 * (all cores; busy per core too), available memory, swap traffic, whole-disk I/O, network traffic and
 * pressure stall time, from <proc_root>/{stat,meminfo,vmstat,diskstats,net/dev} and
 * <proc_root>/pressure/{cpu,io,memory}.
 * <sys_root>/block ($MLBENCH_SYS_ROOT, default /sys) tells whole disks from partitions and
 * stacked devices. Files stay open between ticks and are re-read with pread() from offset 0.
 * docs/metrics.md describes each series. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/sources.h"
#include "util/xalloc.h"

#define NO_SERIES SIZE_MAX
#define FILE_MAX_BYTES (4u << 20) /* /proc/stat grows with CPUs and interrupts */

/* A procfs file kept open, and the buffer it is read into. */
struct sys_file {
    int fd; /* -1: absent when the source opened; its series are not registered */
    char *buf;
    size_t cap;
};

/* The first 8 fields of a "cpu" line of /proc/stat, in clock ticks. guest and guest_nice
 * (fields 9 and 10) are already included in user and nice, so they are left out. */
enum { CPU_USER, CPU_NICE, CPU_SYSTEM, CPU_IDLE, CPU_IOWAIT, CPU_IRQ, CPU_SOFTIRQ, CPU_STEAL, CPU_FIELDS };
struct cpu_times {
    unsigned long long f[CPU_FIELDS];
};

/* Previous reading of one "cpu" line, for the ratios of the next tick. */
struct cpu_prev {
    struct cpu_times t;
    bool valid;
};

struct core {
    long cpu; /* N of the cpuN line */
    size_t series;
    struct cpu_prev prev;
    bool seen; /* its line was in this tick's /proc/stat */
};

/* A sum over named devices of two counters, kept monotonic (see keyed_add). */
struct keyed_value {
    char name[48];
    double v[2];
    bool seen;
};
struct keyed_total {
    struct keyed_value *keys;
    size_t n, cap;
    size_t next; /* where the next name is looked for first: files list devices in one order */
    double total[2];
};

/* Whether a block device name from diskstats is counted (a whole, bottom-layer disk). */
struct disk_class {
    char name[48];
    bool counted;
};

struct disk_line {
    char name[48];
    double sectors[2]; /* read, written */
};

enum { PSI_CPU, PSI_IO, PSI_MEMORY, N_PSI };
static const char *const psi_names[N_PSI] = {"cpu", "io", "memory"};
static const char *const psi_kinds[2] = {"some", "full"};

struct system_state {
    struct sys_file stat, meminfo, vmstat, diskstats, netdev, psi[N_PSI];
    long page_size;
    int block_fd; /* <sys_root>/block, or -1: tell disks by name */

    size_t s_runnable; /* procs_running of stat, or NO_SERIES */
    size_t s_busy, s_iowait, s_steal, s_mem_avail, s_swap_in, s_swap_out, s_disk_read,
        s_disk_written, s_net_rx, s_net_tx, s_psi[N_PSI][2]; /* [some, full] */
    struct cpu_prev all_prev;
    struct core *cores;
    size_t n_cores;

    struct keyed_total disk, net;
    struct disk_class *classes;
    size_t n_classes;
    struct disk_line *lines;
    size_t n_lines, cap_lines;
};

/* ---- reading and parsing ---- */

static void sys_file_open(struct sys_file *f, const char *root, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    f->cap = 4096;
    f->buf = xmalloc(f->cap);
}

static void sys_file_close(struct sys_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    free(f->buf);
    f->buf = NULL;
}

/* Reads the whole file into f->buf (NUL-terminated), growing the buffer as needed. Returns the
 * length, or -1 (errno set, or 0 for a file that is not open). */
static ssize_t sys_file_read(struct sys_file *f)
{
    if (f->fd < 0) {
        errno = 0;
        return -1;
    }
    for (;;) {
        ssize_t n = pread(f->fd, f->buf, f->cap - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if ((size_t)n < f->cap - 1 || f->cap >= FILE_MAX_BYTES) {
            f->buf[n] = '\0';
            return n;
        }
        f->cap *= 2;
        f->buf = xreallocarray(f->buf, f->cap, 1);
    }
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Parses an unsigned decimal after blanks. Returns the end, or NULL when there is none. */
static const char *parse_ull(const char *p, unsigned long long *out)
{
    p = skip_spaces(p);
    if (*p < '0' || *p > '9')
        return NULL;
    unsigned long long v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (unsigned long long)(*p++ - '0');
    *out = v;
    return p;
}

static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : NULL;
}

/* Value of the line "key<blanks><number>" of buf, or -1 when absent. */
static double keyed_line(const char *buf, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = buf; p && *p; p = next_line(p)) {
        unsigned long long v;
        if (!strncmp(p, key, klen) && (p[klen] == ' ' || p[klen] == '\t') && parse_ull(p + klen, &v))
            return (double)v;
    }
    return -1;
}

/* Parses the fields of a "cpu" line after its name. Fields a kernel does not have are 0. */
static bool parse_cpu_fields(const char *p, struct cpu_times *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < CPU_FIELDS; i++) {
        const char *q = parse_ull(p, &t->f[i]);
        if (!q)
            return i >= 4; /* user nice system idle exist on every kernel */
        p = q;
    }
    return true;
}

/* busy = 1 - (idle + iowait) / total, iowait / total and steal / total between prev and now
 * (steal: time the hypervisor ran something else on this machine's CPUs). Returns false
 * when no clock tick elapsed (at 10 ms on one core that happens): prev is then kept, so the next
 * tick measures over the longer interval. Fields that step back (iowait and idle do on some
 * NO_HZ kernels) count as no change. */
static bool cpu_ratios(const struct cpu_times *now, struct cpu_prev *prev, double *busy,
                       double *iowait, double *steal)
{
    bool had = prev->valid;
    unsigned long long d[CPU_FIELDS], total = 0;
    for (int i = 0; i < CPU_FIELDS; i++) {
        d[i] = now->f[i] > prev->t.f[i] ? now->f[i] - prev->t.f[i] : 0;
        total += d[i];
    }
    if (had && total == 0)
        return false;
    prev->t = *now;
    prev->valid = true;
    if (!had)
        return false;
    *busy = (double)(total - d[CPU_IDLE] - d[CPU_IOWAIT]) / (double)total;
    *iowait = (double)d[CPU_IOWAIT] / (double)total;
    *steal = (double)d[CPU_STEAL] / (double)total;
    return true;
}

static int cmp_core(const void *a, const void *b)
{
    const struct core *x = a, *y = b;
    return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* ---- monotonic sums over devices ---- */

static void keyed_begin(struct keyed_total *kt)
{
    for (size_t i = 0; i < kt->n; i++)
        kt->keys[i].seen = false;
    kt->next = 0;
}

/* Adds this tick's values of one device. The total grows by each device's increase; a device
 * that is new (or whose counters went back: re-created under the same name) adds its whole
 * value. A device that disappears adds nothing more, so the total never decreases. */
static void keyed_add(struct keyed_total *kt, const char *name, const double v[2])
{
    struct keyed_value *k = NULL;
    if (kt->next < kt->n && !strcmp(kt->keys[kt->next].name, name))
        k = &kt->keys[kt->next];
    for (size_t i = 0; i < kt->n && !k; i++)
        if (!strcmp(kt->keys[i].name, name))
            k = &kt->keys[i];
    if (!k) {
        kt->keys = xgrow(kt->keys, &kt->cap, kt->n + 1, sizeof *kt->keys);
        k = &kt->keys[kt->n++];
        snprintf(k->name, sizeof k->name, "%s", name);
        k->v[0] = k->v[1] = 0;
    }
    kt->next = (size_t)(k - kt->keys) + 1;
    for (int j = 0; j < 2; j++) {
        kt->total[j] += v[j] >= k->v[j] ? v[j] - k->v[j] : v[j];
        k->v[j] = v[j];
    }
    k->seen = true;
}

static void keyed_end(struct keyed_total *kt)
{
    size_t kept = 0;
    for (size_t i = 0; i < kt->n; i++)
        if (kt->keys[i].seen)
            kt->keys[kept++] = kt->keys[i];
    kt->n = kept;
}

static void keyed_reset(struct keyed_total *kt)
{
    kt->n = kt->next = 0;
    kt->total[0] = kt->total[1] = 0;
}

/* ---- disks ---- */

static bool has_prefix(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* Whether name is a partition of another device of this diskstats snapshot: "sda1" of "sda",
 * "nvme0n1p2" of "nvme0n1", "mmcblk0p1" of "mmcblk0" (the kernel puts a 'p' between a name
 * ending in a digit and the partition number, so "nvme0n10" is no partition of "nvme0n1").
 * Used when /sys/block cannot be read. */
static bool looks_like_partition(const struct system_state *st, const char *name)
{
    for (size_t i = 0; i < st->n_lines; i++) {
        const char *base = st->lines[i].name;
        size_t len = strlen(base);
        if (len == 0 || strncmp(name, base, len))
            continue;
        const char *rest = name + len;
        if (base[len - 1] >= '0' && base[len - 1] <= '9' && *rest++ != 'p')
            continue;
        if (*rest < '0' || *rest > '9')
            continue;
        while (*rest >= '0' && *rest <= '9')
            rest++;
        if (!*rest)
            return true;
    }
    return false;
}

/* Whether <sys_root>/block/<name>/slaves lists a device: dm and md devices stacked on others. */
static bool has_slaves(int block_fd, const char *sysname)
{
    char path[96];
    snprintf(path, sizeof path, "%s/slaves", sysname);
    int fd = openat(block_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    bool any = false;
    struct dirent *de;
    while (!any && (de = readdir(d)))
        any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return any;
}

/* Whether name is "nvme<N>c<N>n<N>": one path of a multipathed NVMe namespace, whose I/O the
 * namespace's own device nvme<N>n<N> counts too. */
static bool is_nvme_path(const char *name)
{
    if (!has_prefix(name, "nvme"))
        return false;
    const char *p = name + 4;
    for (const char *sep = "cn"; *sep; sep++) {
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p++ != *sep)
            return false;
    }
    return *p >= '0' && *p <= '9';
}

/* Counted: whole devices at the bottom of the block stack, so that each byte that reaches a disk
 * is counted once. Partitions are left out (their disk counts them), as are device-mapper and md
 * devices stacked on other devices (LVM, dm-crypt, RAID: their disks count them; a RAID 1 write
 * counts once per disk), loop devices (their backing file's disk counts them), NVMe multipath
 * paths (the namespace counts them) and RAM-backed ram and zram devices (swap to zram shows in
 * the swap series). */
static bool disk_counted(const struct system_state *st, const char *name)
{
    if (has_prefix(name, "loop") || has_prefix(name, "ram") || has_prefix(name, "zram") ||
        is_nvme_path(name))
        return false;
    if (st->block_fd < 0)
        return !has_prefix(name, "dm-") && !has_prefix(name, "md") &&
               !looks_like_partition(st, name);
    char sysname[48]; /* sysfs writes '/' of a device name as '!' (cciss/c0d0) */
    snprintf(sysname, sizeof sysname, "%s", name);
    for (char *c = sysname; *c; c++)
        if (*c == '/')
            *c = '!';
    if (faccessat(st->block_fd, sysname, F_OK, 0) != 0)
        return false; /* not in /sys/block: a partition */
    return !has_slaves(st->block_fd, sysname);
}

/* Whether the device of diskstats line i, name, is counted; decided once per name. */
static bool disk_class_get(struct system_state *st, size_t i, const char *name)
{
    if (i < st->n_classes && !strcmp(st->classes[i].name, name))
        return st->classes[i].counted; /* devices keep their order in diskstats */
    for (size_t j = 0; j < st->n_classes; j++)
        if (!strcmp(st->classes[j].name, name))
            return st->classes[j].counted;
    st->classes = xreallocarray(st->classes, st->n_classes + 1, sizeof *st->classes);
    struct disk_class *c = &st->classes[st->n_classes++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->counted = disk_counted(st, name);
    return c->counted;
}

/* Parses diskstats into st->lines. Returns false when no line parses. */
static bool parse_diskstats(struct system_state *st, const char *buf)
{
    st->n_lines = 0;
    for (const char *p = buf; p && *p; p = next_line(p)) {
        unsigned long long major, minor, f[7];
        const char *q = parse_ull(p, &major);
        if (!q || !(q = parse_ull(q, &minor)))
            continue;
        q = skip_spaces(q);
        size_t len = strcspn(q, " \t\n");
        struct disk_line line;
        if (len == 0 || len >= sizeof line.name)
            continue;
        memcpy(line.name, q, len);
        line.name[len] = '\0';
        q += len;
        bool ok = true;
        for (int i = 0; i < 7 && ok; i++)
            ok = (q = parse_ull(q, &f[i])) != NULL;
        if (!ok)
            continue;
        line.sectors[0] = (double)f[2]; /* sectors read */
        line.sectors[1] = (double)f[6]; /* sectors written */
        st->lines = xgrow(st->lines, &st->cap_lines, st->n_lines + 1, sizeof *st->lines);
        st->lines[st->n_lines++] = line;
    }
    return st->n_lines > 0;
}

/* ---- network ---- */

/* Adds every interface of net/dev but lo to st->net. Returns the number of lines parsed. */
static size_t parse_netdev(struct system_state *st, const char *buf)
{
    size_t parsed = 0;
    for (const char *p = buf; p && *p; p = next_line(p)) {
        const char *colon = strchr(p, ':');
        const char *nl = strchr(p, '\n');
        if (!colon || (nl && colon > nl))
            continue; /* the two header lines */
        const char *name = skip_spaces(p);
        char ifname[48];
        size_t len = (size_t)(colon - name);
        if (len == 0 || len >= sizeof ifname)
            continue;
        memcpy(ifname, name, len);
        ifname[len] = '\0';
        /* receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes */
        unsigned long long f[9];
        const char *q = colon + 1;
        bool ok = true;
        for (int i = 0; i < 9 && ok; i++)
            ok = (q = parse_ull(q, &f[i])) != NULL;
        if (!ok)
            continue;
        parsed++;
        if (strcmp(ifname, "lo"))
            keyed_add(&st->net, ifname, (const double[2]){(double)f[0], (double)f[8]});
    }
    return parsed;
}

/* ---- pressure ---- */

/* Value of total= on the line starting with kind ("some", "full"), in microseconds, or -1. */
static double psi_total(const char *buf, const char *kind)
{
    size_t klen = strlen(kind);
    for (const char *p = buf; p && *p; p = next_line(p)) {
        if (strncmp(p, kind, klen) || p[klen] != ' ')
            continue;
        const char *nl = strchr(p, '\n');
        const char *t = strstr(p, "total=");
        unsigned long long v;
        if (t && (!nl || t < nl) && parse_ull(t + 6, &v))
            return (double)v;
        return -1;
    }
    return -1;
}

/* ---- sampling ---- */

/* Returns whether stat could be read and parsed (its text is then in st->stat.buf): a file
 * that fails counts one error, however many of its values are missing. */
static bool sample_cpu(struct system_state *st, struct sample_table *tab, size_t row,
                       uint64_t *errors)
{
    if (sys_file_read(&st->stat) < 0) {
        (*errors)++;
        return false;
    }
    bool have_all = false;
    for (size_t i = 0; i < st->n_cores; i++)
        st->cores[i].seen = false;
    for (const char *p = st->stat.buf; p && !strncmp(p, "cpu", 3); p = next_line(p)) {
        struct cpu_times t;
        double busy, iowait, steal;
        if (p[3] == ' ') {
            if (!parse_cpu_fields(p + 3, &t))
                break;
            have_all = true;
            if (cpu_ratios(&t, &st->all_prev, &busy, &iowait, &steal)) {
                sample_table_set(tab, st->s_busy, row, busy);
                sample_table_set(tab, st->s_iowait, row, iowait);
                sample_table_set(tab, st->s_steal, row, steal);
            }
            continue;
        }
        char *end;
        long n = strtol(p + 3, &end, 10);
        struct core key = {.cpu = n};
        struct core *c =
            st->n_cores ? bsearch(&key, st->cores, st->n_cores, sizeof key, cmp_core) : NULL;
        if (end == p + 3 || !c || !parse_cpu_fields(end, &t))
            continue; /* a CPU brought online after open: not registered */
        c->seen = true;
        if (cpu_ratios(&t, &c->prev, &busy, &iowait, &steal))
            sample_table_set(tab, c->series, row, busy);
    }
    if (!have_all)
        (*errors)++;
    /* An offline CPU is no error; when it comes back its first tick has no ratio. */
    for (size_t i = 0; i < st->n_cores; i++)
        if (!st->cores[i].seen)
            st->cores[i].prev.valid = false;
    return have_all;
}

/* Stores value * scale into series when value >= 0 (found). Returns false when it was not. */
static bool set_found(struct sample_table *tab, size_t series, size_t row, double value,
                      double scale)
{
    if (series == NO_SERIES || value < 0)
        return series == NO_SERIES;
    sample_table_set(tab, series, row, value * scale);
    return true;
}

static void system_sample(void *state, struct sample_ctx *ctx, struct sample_table *tab,
                          size_t row, uint64_t *errors)
{
    (void)ctx;
    struct system_state *st = state;
    if (sample_cpu(st, tab, row, errors) &&
        !set_found(tab, st->s_runnable, row, keyed_line(st->stat.buf, "procs_running"), 1))
        (*errors)++;

    /* Each file that cannot be read, or lacks a value it had at open, is one error. */
    if (st->s_mem_avail != NO_SERIES &&
        (sys_file_read(&st->meminfo) < 0 ||
         !set_found(tab, st->s_mem_avail, row, keyed_line(st->meminfo.buf, "MemAvailable:"), 1024)))
        (*errors)++;
    if (st->s_swap_in != NO_SERIES) {
        double page = (double)st->page_size;
        bool ok = sys_file_read(&st->vmstat) >= 0;
        ok = ok && set_found(tab, st->s_swap_in, row, keyed_line(st->vmstat.buf, "pswpin"), page);
        ok = ok && set_found(tab, st->s_swap_out, row, keyed_line(st->vmstat.buf, "pswpout"), page);
        if (!ok)
            (*errors)++;
    }
    if (st->s_disk_read != NO_SERIES) {
        if (sys_file_read(&st->diskstats) < 0 || !parse_diskstats(st, st->diskstats.buf)) {
            (*errors)++;
        } else {
            keyed_begin(&st->disk);
            for (size_t i = 0; i < st->n_lines; i++)
                if (disk_class_get(st, i, st->lines[i].name))
                    keyed_add(&st->disk, st->lines[i].name, st->lines[i].sectors);
            keyed_end(&st->disk);
            sample_table_set(tab, st->s_disk_read, row, st->disk.total[0] * 512);
            sample_table_set(tab, st->s_disk_written, row, st->disk.total[1] * 512);
        }
    }
    if (st->s_net_rx != NO_SERIES) {
        /* A failed read leaves the devices as they were, so the next tick adds no false jump. */
        keyed_begin(&st->net);
        if (sys_file_read(&st->netdev) < 0 || parse_netdev(st, st->netdev.buf) == 0) {
            (*errors)++;
        } else {
            keyed_end(&st->net);
            sample_table_set(tab, st->s_net_rx, row, st->net.total[0]);
            sample_table_set(tab, st->s_net_tx, row, st->net.total[1]);
        }
    }
    for (int r = 0; r < N_PSI; r++) {
        if (st->s_psi[r][0] == NO_SERIES && st->s_psi[r][1] == NO_SERIES)
            continue;
        bool ok = sys_file_read(&st->psi[r]) >= 0;
        for (int k = 0; k < 2; k++)
            ok = ok && set_found(tab, st->s_psi[r][k], row,
                                 psi_total(st->psi[r].buf, psi_kinds[k]), 1e-6);
        if (!ok)
            (*errors)++;
    }
}

static void system_run_start(void *state)
{
    struct system_state *st = state;
    st->all_prev.valid = false;
    for (size_t i = 0; i < st->n_cores; i++)
        st->cores[i].prev.valid = false;
    keyed_reset(&st->disk);
    keyed_reset(&st->net);
}

static void system_close(void *state)
{
    struct system_state *st = state;
    if (!st)
        return;
    sys_file_close(&st->stat);
    sys_file_close(&st->meminfo);
    sys_file_close(&st->vmstat);
    sys_file_close(&st->diskstats);
    sys_file_close(&st->netdev);
    for (int r = 0; r < N_PSI; r++)
        sys_file_close(&st->psi[r]);
    if (st->block_fd >= 0)
        close(st->block_fd);
    free(st->cores);
    free(st->disk.keys);
    free(st->net.keys);
    free(st->classes);
    free(st->lines);
    free(st);
}

/* Registers the per-core series from the cpuN lines of stat. */
static void register_cores(struct system_state *st, struct series_registry *reg)
{
    for (const char *p = st->stat.buf; p && !strncmp(p, "cpu", 3); p = next_line(p)) {
        char *end;
        long n = strtol(p + 3, &end, 10);
        if (p[3] < '0' || p[3] > '9' || *end != ' ')
            continue;
        char labels[32];
        snprintf(labels, sizeof labels, "cpu=\"%ld\"", n);
        st->cores = xreallocarray(st->cores, st->n_cores + 1, sizeof *st->cores);
        st->cores[st->n_cores++] = (struct core){
            n, series_register(reg, "system", "system_cpu_core_busy_ratio", labels, SERIES_GAUGE),
            {{{0}}, false}, false};
    }
    if (st->n_cores > 1)
        qsort(st->cores, st->n_cores, sizeof *st->cores, cmp_core);
}

/* Fails only when <proc_root>/stat cannot be read. Every other file is optional: its series are
 * registered only when it is readable now (no pressure directory: no pressure series). */
static int system_open(struct series_registry *reg, const struct sample_ctx *ctx, void **state,
                       char *err, size_t errlen)
{
    struct system_state *st = xcalloc(1, sizeof *st);
    const char *root = ctx->proc_root;
    st->page_size = ctx->page_size > 0 ? ctx->page_size : 4096;
    st->block_fd = -1;
    sys_file_open(&st->stat, root, "stat");
    int stat_errno = errno;
    sys_file_open(&st->meminfo, root, "meminfo");
    sys_file_open(&st->vmstat, root, "vmstat");
    sys_file_open(&st->diskstats, root, "diskstats");
    sys_file_open(&st->netdev, root, "net/dev");
    for (int r = 0; r < N_PSI; r++) {
        char rel[32];
        snprintf(rel, sizeof rel, "pressure/%s", psi_names[r]);
        sys_file_open(&st->psi[r], root, rel);
    }
    struct cpu_times t;
    if (sys_file_read(&st->stat) < 0 || strncmp(st->stat.buf, "cpu ", 4) ||
        !parse_cpu_fields(st->stat.buf + 3, &t)) {
        snprintf(err, errlen, "cannot read CPU times from %s/stat: %s", root,
                 st->stat.fd < 0 ? strerror(stat_errno) : "no \"cpu\" line");
        system_close(st);
        return -1;
    }
    const char *sys_root = getenv("MLBENCH_SYS_ROOT");
    char block[512];
    snprintf(block, sizeof block, "%s/block", sys_root && *sys_root ? sys_root : "/sys");
    st->block_fd = open(block, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    st->s_busy = series_register(reg, "system", "system_cpu_busy_ratio", "", SERIES_GAUGE);
    st->s_iowait = series_register(reg, "system", "system_cpu_iowait_ratio", "", SERIES_GAUGE);
    st->s_steal = series_register(reg, "system", "system_cpu_steal_ratio", "", SERIES_GAUGE);
    register_cores(st, reg);
    st->s_runnable = keyed_line(st->stat.buf, "procs_running") >= 0
                         ? series_register(reg, "system", "system_procs_running", "",
                                           SERIES_GAUGE)
                         : NO_SERIES;

    st->s_mem_avail = st->s_swap_in = st->s_swap_out = st->s_disk_read = st->s_disk_written =
        st->s_net_rx = st->s_net_tx = NO_SERIES;
    if (sys_file_read(&st->meminfo) >= 0 && keyed_line(st->meminfo.buf, "MemAvailable:") >= 0)
        st->s_mem_avail = series_register(reg, "system", "system_memory_available_bytes", "",
                                          SERIES_GAUGE);
    if (sys_file_read(&st->vmstat) >= 0 && keyed_line(st->vmstat.buf, "pswpin") >= 0 &&
        keyed_line(st->vmstat.buf, "pswpout") >= 0) {
        st->s_swap_in = series_register(reg, "system", "system_swap_in_bytes_total", "",
                                        SERIES_COUNTER);
        st->s_swap_out = series_register(reg, "system", "system_swap_out_bytes_total", "",
                                         SERIES_COUNTER);
    }
    if (sys_file_read(&st->diskstats) >= 0) {
        st->s_disk_read = series_register(reg, "system", "system_disk_read_bytes_total", "",
                                          SERIES_COUNTER);
        st->s_disk_written = series_register(reg, "system", "system_disk_written_bytes_total",
                                             "", SERIES_COUNTER);
    }
    if (sys_file_read(&st->netdev) >= 0) {
        st->s_net_rx = series_register(reg, "system", "system_network_receive_bytes_total", "",
                                       SERIES_COUNTER);
        st->s_net_tx = series_register(reg, "system", "system_network_transmit_bytes_total", "",
                                       SERIES_COUNTER);
    }
    for (int r = 0; r < N_PSI; r++) {
        bool ok = sys_file_read(&st->psi[r]) >= 0;
        for (int k = 0; k < 2; k++) {
            st->s_psi[r][k] = NO_SERIES;
            if (ok && psi_total(st->psi[r].buf, psi_kinds[k]) >= 0) {
                char name[64];
                snprintf(name, sizeof name, "system_pressure_%s_%s_seconds_total", psi_names[r],
                         psi_kinds[k]);
                st->s_psi[r][k] = series_register(reg, "system", name, "", SERIES_COUNTER);
                reg->defs[st->s_psi[r][k]].max_rate = 1; /* a share of the time */
            }
        }
    }
    system_run_start(st);
    *state = st;
    return 0;
}

const struct metric_source system_source = {
    .name = "system",
    .open = system_open,
    .sample = system_sample,
    .run_start = system_run_start,
    .close = system_close,
};
