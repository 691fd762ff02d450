/* dataset_fs: the dataset module's file helpers (dataset_private.h): error messages and strings,
 * mkdir -p, removing a tree, writing a file, and dataset_read_file (dataset.h), which the loader
 * uses to read each JPEG. */
#include "imgclf/data/dataset_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/opts.h"

void ds_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* printf into a new string; NULL when out of memory. */
char *ds_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

const char *ds_env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* mkdir -p. 0, or -1 with errno set and path cut after the component that could not be
 * created (*failed = path, for the message). */
int ds_mkdir_p(char *path, const char **failed)
{
    *failed = path;
    size_t len = strlen(path);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        if (path[i - 1] == '/')
            continue;
        char saved = path[i];
        path[i] = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        if (rc != 0 && e == EEXIST) {
            struct stat st;
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                rc = 0;
            else
                e = ENOTDIR;
        }
        if (rc != 0) {
            errno = e;
            return -1; /* path stays cut at the failing component */
        }
        path[i] = saved;
    }
    return 0;
}

/* Removes name (relative to dirfd) and everything under it, without following symbolic
 * links. A missing name is not an error. 0, or -1 with errno set. */
int ds_rm_tree_at(int dirfd, const char *name)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (ds_rm_tree_at(fd, de->d_name) < 0) {
            rc = -1;
            break;
        }
        errno = 0;
    }
    int e = errno; /* of the failed removal, or of readdir */
    closedir(d);
    if (rc < 0 || e) {
        errno = e;
        return -1;
    }
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Writes a whole file (no fsync: the MANIFEST, written last after a syncfs, vouches for all).
 * 0, or -1 with errno set. */
int ds_write_file(const char *path, const unsigned char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (wl_write_all(fd, data, len) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

int dataset_read_file(const char *path, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0)
        goto fail;
    if (!S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        goto fail;
    }
    size_t cap = (size_t)st.st_size;
    unsigned char *buf = malloc(cap ? cap : 1);
    if (!buf)
        goto fail;
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break; /* the file shrank since fstat: return what is there */
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = got;
    return 0;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}
