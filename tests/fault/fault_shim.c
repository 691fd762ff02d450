/* fault_shim: an LD_PRELOAD library for the tests (never installed) that makes the Nth call of
 * one function fail with a chosen errno, so that every write path of mlbench can be checked to
 * leave the old state or the new one on disk, never a partial file (tests/fault/README.md).
 *
 *   MLBENCH_FAULT=write:7:ENOSPC     the 7th eligible write fails with ENOSPC
 *   MLBENCH_FAULT_COUNTS=FILE        at exit, "NAME COUNT" per function (and "fired NAME N")
 *
 * Only calls that matter are counted, so that N is stable from one run to the next: calls of
 * the process that loaded the shim (not of forked children), on regular files or directories
 * (not pipes, sockets or terminals). Counted functions (the name selects the counter):
 *   write     write() and the writes of streams made by fdopen() (below)
 *   pwrite    pwrite(), pwrite64()
 *   fsync     fsync(), fdatasync() (one counter: SQLite uses either)
 *   rename    rename(), renameat(), renameat2()
 *   unlink    unlink(), unlinkat() of a file (not AT_REMOVEDIR)
 *   open      open*() with O_CREAT, mkstemp(), mkostemp(), fopen() for writing
 *   malloc    malloc(), calloc(), realloc() (one counter; the failing call returns NULL)
 *
 * glibc's stdio writes through its internal __write, which no preload can reach: so fdopen() of
 * a regular file returns a stream of fopencookie() whose writes go through the counted write()
 * (its fileno is the descriptor, which fsync needs). The shim removes LD_PRELOAD from its
 * process's environment, so that the commands mlbench runs are not counted. */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

enum { F_WRITE, F_PWRITE, F_FSYNC, F_RENAME, F_UNLINK, F_OPEN, F_MALLOC, F_COUNT };
static const char *const names[F_COUNT] = {"write", "pwrite", "fsync", "rename",
                                           "unlink", "open", "malloc"};

static atomic_long counts[F_COUNT];
static int fault_fn = -1;  /* which counter fails, -1: none */
static long fault_n;       /* at which call (1-based) */
static int fault_errno;
static atomic_int fired;
static pid_t main_pid;
static atomic_int ready;   /* set once the configuration is read: nothing counts before */

static const struct {
    const char *name;
    int value;
} errnos[] = {
    {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EDQUOT", EDQUOT}, {"EACCES", EACCES},
    {"EROFS", EROFS}, {"ENOMEM", ENOMEM}, {"EPERM", EPERM}, {"EFBIG", EFBIG},
    {"EMFILE", EMFILE}, {"EEXIST", EEXIST}, {"EBUSY", EBUSY}, {"EXDEV", EXDEV},
};

/* ---------------------------------------------------------------- the real functions */

#define REAL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)
REAL(ssize_t, write, int, const void *, size_t);
REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
REAL(ssize_t, pwrite64, int, const void *, size_t, off64_t);
REAL(int, fsync, int);
REAL(int, fdatasync, int);
REAL(int, rename, const char *, const char *);
REAL(int, renameat, int, const char *, int, const char *);
REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
REAL(int, unlink, const char *);
REAL(int, unlinkat, int, const char *, int);
REAL(int, open, const char *, int, ...);
REAL(int, open64, const char *, int, ...);
REAL(int, openat, int, const char *, int, ...);
REAL(int, openat64, int, const char *, int, ...);
REAL(int, mkstemp, char *);
REAL(int, mkostemp, char *, int);
REAL(FILE *, fopen, const char *, const char *);
REAL(FILE *, fopen64, const char *, const char *);
REAL(FILE *, fdopen, int, const char *);
REAL(void *, malloc, size_t);
REAL(void *, calloc, size_t, size_t);
REAL(void *, realloc, void *, size_t);
REAL(void, free, void *);

/* dlsym may allocate before the allocator is known: from this arena, never freed. */
static char boot_arena[64 * 1024] __attribute__((aligned(16)));
static atomic_size_t boot_used;
static atomic_int resolving_malloc;

static void *boot_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    size_t at = atomic_fetch_add(&boot_used, size);
    if (at + size > sizeof boot_arena)
        return NULL;
    return boot_arena + at;
}

static bool in_boot(const void *p)
{
    return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

static void resolve_malloc(void)
{
    if (real_malloc || atomic_exchange(&resolving_malloc, 1))
        return;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_malloc = dlsym(RTLD_NEXT, "malloc");
}

#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        if (!real_##name)                                                                          \
            real_##name = dlsym(RTLD_NEXT, #name);                                                 \
    } while (0)

/* ---------------------------------------------------------------- counting */

static bool fd_counts(int fd)
{
    struct stat st;
    return fd > 2 && fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

/* Counts one eligible call of fn; true (errno set) when this is the call that must fail. */
static bool should_fail(int fn)
{
    if (!atomic_load(&ready) || getpid() != main_pid)
        return false;
    long n = atomic_fetch_add(&counts[fn], 1) + 1;
    if (fn != fault_fn || n != fault_n)
        return false;
    atomic_store(&fired, 1);
    errno = fault_errno;
    return true;
}

static void write_counts(void)
{
    const char *path = getenv("MLBENCH_FAULT_COUNTS");
    if (!path || !*path || getpid() != main_pid)
        return;
    atomic_store(&ready, 0); /* our own writes are not the program's */
    RESOLVE(open);
    RESOLVE(write);
    int fd = real_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char line[128];
    for (int i = 0; i < F_COUNT; i++) {
        int len = snprintf(line, sizeof line, "%s %ld\n", names[i], atomic_load(&counts[i]));
        real_write(fd, line, (size_t)len);
    }
    if (atomic_load(&fired)) {
        int len = snprintf(line, sizeof line, "fired %s %ld\n", names[fault_fn], fault_n);
        real_write(fd, line, (size_t)len);
    }
    close(fd);
}

__attribute__((constructor)) static void shim_init(void)
{
    main_pid = getpid();
    const char *spec = getenv("MLBENCH_FAULT");
    if (spec && *spec) {
        char fn[32];
        char err[32];
        long n;
        if (sscanf(spec, "%31[a-z0-9]:%ld:%31[A-Z0-9]", fn, &n, err) != 3 || n < 1) {
            fprintf(stderr, "fault_shim: MLBENCH_FAULT='%s' is not NAME:N:ERRNO\n", spec);
            _exit(125);
        }
        for (int i = 0; i < F_COUNT; i++)
            if (!strcmp(fn, names[i]))
                fault_fn = i;
        for (size_t i = 0; i < sizeof errnos / sizeof *errnos; i++)
            if (!strcmp(err, errnos[i].name))
                fault_errno = errnos[i].value;
        if (!fault_errno && err[0] >= '0' && err[0] <= '9')
            fault_errno = atoi(err);
        if (fault_fn < 0 || !fault_errno) {
            fprintf(stderr, "fault_shim: MLBENCH_FAULT='%s': unknown function or errno\n", spec);
            _exit(125);
        }
        fault_n = n;
    }
    /* The commands mlbench runs (and their children) are not what is tested. */
    unsetenv("LD_PRELOAD");
    atexit(write_counts);
    atomic_store(&ready, 1);
}

/* ---------------------------------------------------------------- writes */

ssize_t write(int fd, const void *buf, size_t len)
{
    RESOLVE(write);
    if (fd_counts(fd) && should_fail(F_WRITE))
        return -1;
    return real_write(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    RESOLVE(pwrite);
    if (fd_counts(fd) && should_fail(F_PWRITE))
        return -1;
    return real_pwrite(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
    RESOLVE(pwrite64);
    if (fd_counts(fd) && should_fail(F_PWRITE))
        return -1;
    return real_pwrite64(fd, buf, len, off);
}

int fsync(int fd)
{
    RESOLVE(fsync);
    if (fd_counts(fd) && should_fail(F_FSYNC))
        return -1;
    return real_fsync(fd);
}

int fdatasync(int fd)
{
    RESOLVE(fdatasync);
    if (fd_counts(fd) && should_fail(F_FSYNC))
        return -1;
    return real_fdatasync(fd);
}

int rename(const char *from, const char *to)
{
    RESOLVE(rename);
    if (should_fail(F_RENAME))
        return -1;
    return real_rename(from, to);
}

int renameat(int dfrom, const char *from, int dto, const char *to)
{
    RESOLVE(renameat);
    if (should_fail(F_RENAME))
        return -1;
    return real_renameat(dfrom, from, dto, to);
}

int renameat2(int dfrom, const char *from, int dto, const char *to, unsigned int flags)
{
    RESOLVE(renameat2);
    if (should_fail(F_RENAME))
        return -1;
    return real_renameat2(dfrom, from, dto, to, flags);
}

int unlink(const char *path)
{
    RESOLVE(unlink);
    if (should_fail(F_UNLINK))
        return -1;
    return real_unlink(path);
}

int unlinkat(int dfd, const char *path, int flags)
{
    RESOLVE(unlinkat);
    if (!(flags & AT_REMOVEDIR) && should_fail(F_UNLINK))
        return -1;
    return real_unlinkat(dfd, path, flags);
}

/* ---------------------------------------------------------------- creating files */

#define OPEN_BODY(name, ...)                                                                       \
    mode_t mode = 0;                                                                               \
    if (flags & (O_CREAT | __O_TMPFILE)) {                                                         \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode = (mode_t)va_arg(ap, int);                                                            \
        va_end(ap);                                                                                \
    }                                                                                              \
    RESOLVE(name);                                                                                 \
    if ((flags & O_CREAT) && should_fail(F_OPEN))                                                  \
        return -1;                                                                                 \
    return real_##name(__VA_ARGS__, flags, mode)

int open(const char *path, int flags, ...)
{
    OPEN_BODY(open, path);
}

int open64(const char *path, int flags, ...)
{
    OPEN_BODY(open64, path);
}

int openat(int dfd, const char *path, int flags, ...)
{
    OPEN_BODY(openat, dfd, path);
}

int openat64(int dfd, const char *path, int flags, ...)
{
    OPEN_BODY(openat64, dfd, path);
}

int mkstemp(char *tmpl)
{
    RESOLVE(mkstemp);
    if (should_fail(F_OPEN))
        return -1;
    return real_mkstemp(tmpl);
}

int mkostemp(char *tmpl, int flags)
{
    RESOLVE(mkostemp);
    if (should_fail(F_OPEN))
        return -1;
    return real_mkostemp(tmpl, flags);
}

static bool writing_mode(const char *mode)
{
    return strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+');
}

FILE *fopen(const char *path, const char *mode)
{
    RESOLVE(fopen);
    if (writing_mode(mode) && should_fail(F_OPEN))
        return NULL;
    return real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
    RESOLVE(fopen64);
    if (writing_mode(mode) && should_fail(F_OPEN))
        return NULL;
    return real_fopen64(path, mode);
}

/* A stream over fd whose writes are counted (glibc's own go around write()). */
static ssize_t cookie_read(void *c, char *buf, size_t len)
{
    return read((int)(intptr_t)c, buf, len);
}

static ssize_t cookie_write(void *c, const char *buf, size_t len)
{
    ssize_t n = write((int)(intptr_t)c, buf, len);
    return n < 0 ? -1 : n; /* glibc then sets the stream's error flag; errno is ours */
}

static int cookie_seek(void *c, off64_t *off, int whence)
{
    off64_t at = lseek((int)(intptr_t)c, *off, whence);
    if (at < 0)
        return -1;
    *off = at;
    return 0;
}

static int cookie_close(void *c)
{
    return close((int)(intptr_t)c);
}

FILE *fdopen(int fd, const char *mode)
{
    RESOLVE(fdopen);
    struct stat st;
    if (!writing_mode(mode) || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return real_fdopen(fd, mode);
    cookie_io_functions_t io = {cookie_read, cookie_write, cookie_seek, cookie_close};
    FILE *f = fopencookie((void *)(intptr_t)fd, mode, io);
    if (f)
        f->_fileno = fd; /* for fileno(): fsync of the stream's file (only -1 means closed) */
    return f;
}

/* ---------------------------------------------------------------- allocation */

void *malloc(size_t size)
{
    if (!real_malloc) {
        resolve_malloc();
        if (!real_malloc)
            return boot_alloc(size);
    }
    if (should_fail(F_MALLOC))
        return NULL;
    return real_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    if (!real_calloc) {
        resolve_malloc();
        if (!real_calloc)
            return boot_alloc(count * size); /* zeroed: static storage, never reused */
    }
    if (should_fail(F_MALLOC))
        return NULL;
    return real_calloc(count, size);
}

void *realloc(void *p, size_t size)
{
    if (!real_realloc)
        resolve_malloc();
    if (in_boot(p)) {
        void *q = malloc(size);
        size_t room = (size_t)(boot_arena + sizeof boot_arena - (char *)p);
        if (q)
            memcpy(q, p, size < room ? size : room); /* the old size is not kept: at most this */
        return q;
    }
    if (should_fail(F_MALLOC))
        return NULL;
    return real_realloc(p, size);
}

void free(void *p)
{
    if (!p || in_boot(p))
        return;
    if (!real_free)
        resolve_malloc();
    real_free(p);
}
