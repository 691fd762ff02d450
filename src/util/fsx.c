/* fsx: whole-file reads, directories and atomic replacement (see fsx.h). */
#include "util/fsx.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* Reads path; past max_bytes it fails with EFBIG, or with truncate keeps the first max_bytes. */
static char *read_whole(const char *path, size_t max_bytes, bool truncate, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n + 1 == cap) {
            if (cap > max_bytes && truncate)
                break;
            if (cap > max_bytes) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return NULL;
            }
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int saved = errno;
            free(buf);
            close(fd);
            errno = saved;
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (n > max_bytes && !truncate) {
        free(buf);
        errno = EFBIG;
        return NULL;
    }
    if (n > max_bytes)
        n = max_bytes;
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *fsx_read_file(const char *path, size_t max_bytes, size_t *len)
{
    return read_whole(path, max_bytes, false, len);
}

char *fsx_read_prefix(const char *path, size_t max_bytes, size_t *len)
{
    return read_whole(path, max_bytes, true, len);
}

int fsx_mkdirs(const char *dir)
{
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) < 0 && errno != EEXIST) {
            int saved = errno;
            free(p);
            errno = saved;
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0777) < 0 && errno != EEXIST ? -1 : 0;
    int saved = errno;
    free(p);
    errno = saved;
    return rc;
}

bool fsx_pid_gone(long pid)
{
    return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

size_t fsx_clean_stale(const char *dir, const char *mark, const char *inner)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t removed = 0, mark_len = strlen(mark);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *at = strstr(e->d_name, mark);
        char *end;
        if (!at || (inner && at != e->d_name))
            continue;
        const char *digits = at + mark_len;
        long pid = strtol(digits, &end, 10);
        struct stat st;
        if (end == digits || (*end != '.' && *end != '-') || strlen(end + 1) != 6 ||
            !fsx_pid_gone(pid) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !(inner ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) || st.st_uid != geteuid())
            continue;
        if (inner) { /* its one known file, then the directory (which fails on anything else) */
            char path[512];
            snprintf(path, sizeof path, "%s/%s", e->d_name, inner);
            unlinkat(dirfd(d), path, 0);
        }
        removed += unlinkat(dirfd(d), e->d_name, inner ? AT_REMOVEDIR : 0) == 0;
    }
    closedir(d);
    return removed;
}

/* The stream's writes: all of buf, or -1 with the first failure's errno kept in a->error. */
static ssize_t atomic_write(void *cookie, const char *buf, size_t len)
{
    struct fsx_atomic *a = cookie;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(a->fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (!a->error)
                a->error = n < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static int atomic_close(void *cookie)
{
    struct fsx_atomic *a = cookie;
    return close(a->fd);
}

FILE *fsx_atomic_open(struct fsx_atomic *a, const char *path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->tmp = xasprintf("%s.tmp.%ld.XXXXXX", path, (long)getpid());
    int fd = mkstemp(a->tmp);
    if (fd >= 0) {
        fchmod(fd, 0644);
        a->fd = fd;
        a->f = fopencookie(a, "w", (cookie_io_functions_t){.write = atomic_write,
                                                           .close = atomic_close});
        if (!a->f) {
            int saved = errno;
            close(fd);
            unlink(a->tmp);
            errno = saved;
        }
    }
    if (!a->f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        free(a->tmp);
        a->tmp = NULL;
        return NULL;
    }
    a->path = xstrdup(path);
    return a->f;
}

int fsx_atomic_commit(struct fsx_atomic *a, char *err, size_t errlen)
{
    errno = 0;
    int failed = ferror(a->f) || fflush(a->f) == EOF || fsync(a->fd) < 0;
    int saved = a->error ? a->error : errno ? errno : EIO;
    if (fclose(a->f) == EOF && !failed) {
        failed = 1;
        saved = errno;
    }
    a->f = NULL;
    if (!failed && rename(a->tmp, a->path) < 0) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        snprintf(err, errlen, "cannot write %s: %s", a->path, strerror(saved));
        unlink(a->tmp);
    }
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
    return failed ? -1 : 0;
}

void fsx_atomic_abort(struct fsx_atomic *a)
{
    if (a->f)
        fclose(a->f);
    if (a->tmp)
        unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
}
