/* cnn_file: writing and reading the small CNN's model file (the format is in cnn_file.h). The
 * whole file is built in, or read into, one buffer: 1.7 MB for Fashion-MNIST's model. */
#include "imgclf/cnn_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "common/opts.h"

static const unsigned char magic[8] = {'M', 'L', 'B', 'C', 'N', 'N', 0x1a, '\n'};

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* zlib's crc32 takes at most UINT_MAX bytes a call. */
static uint32_t checksum(const unsigned char *p, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (len > 0) {
        uInt chunk = len > UINT_MAX ? UINT_MAX : (uInt)len;
        crc = crc32(crc, p, chunk);
        p += chunk;
        len -= chunk;
    }
    return (uint32_t)crc;
}

/* The shape limits of cnn_create, checked here first so that the layout cannot overflow. 0, or
 * -1 with the message. */
static int shape_check(const char *path, const struct cnn_shape *s, char *err, size_t errlen)
{
    const char *bad = NULL;
    int value = 0;
    if (s->height < 4 || s->height > 4096 || s->height % 4)
        bad = "height", value = s->height;
    else if (s->width < 4 || s->width > 4096 || s->width % 4)
        bad = "width", value = s->width;
    else if (s->channels < 1 || s->channels > 1024)
        bad = "channels", value = s->channels;
    else if (s->classes < 2 || s->classes > 1000000)
        bad = "classes", value = s->classes;
    if (!bad)
        return 0;
    snprintf(err, errlen, "%s: not a valid model file: its shape's %s is %d (height and width "
             "are multiples of 4 up to 4096, channels 1 to 1024, classes 2 to 1000000)", path,
             bad, value);
    errno = EINVAL;
    return -1;
}

/* Writes the file's bytes to a temporary file beside path, then renames it over path. */
static int write_atomically(const char *path, const unsigned char *buf, size_t len, char *err,
                            size_t errlen)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof ".tmp-XXXXXX");
    if (!tmp) {
        snprintf(err, errlen, "%s: cannot allocate the temporary file's name", path);
        errno = ENOMEM;
        return -1;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot write the model to '%s': %s", path, strerror(e));
        free(tmp);
        errno = e;
        return -1;
    }
    const char *what = "write";
    int rc = wl_write_all(fd, buf, len);
    if (rc == 0 && (what = "fsync", fsync(fd)) != 0)
        rc = -1;
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
        what = "close";
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
        what = "rename";
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot write the model to '%s': %s of %s failed: %s", path, what,
                 tmp, strerror(e));
        unlink(tmp);
        free(tmp);
        errno = e;
        return -1;
    }
    free(tmp);
    /* The rename itself is durable once the directory is synced too. */
    char *dir = strdup(path);
    if (dir) {
        char *slash = strrchr(dir, '/');
        if (slash)
            slash[slash == dir ? 1 : 0] = '\0'; /* "/x" -> "/", "a/b" -> "a" */
        int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd); /* best effort: some file systems refuse fsync on a directory */
            close(dfd);
        }
        free(dir);
    }
    return 0;
}

int cnn_file_save(const char *path, const struct cnn_shape *shape, const float *params,
                  size_t nparam, char *err, size_t errlen)
{
    if (shape_check(path, shape, err, errlen))
        return -1;
    size_t want = cnn_layout_of(shape).nparam;
    if (nparam != want) {
        snprintf(err, errlen, "%s: %zu parameters given for a shape that has %zu", path, nparam,
                 want);
        errno = EINVAL;
        return -1;
    }
    size_t len = CNN_FILE_HEADER_BYTES + 4 * nparam + 4;
    unsigned char *buf = malloc(len);
    if (!buf) {
        snprintf(err, errlen, "%s: cannot allocate the %zu bytes of the model file", path, len);
        errno = ENOMEM;
        return -1;
    }
    memcpy(buf, magic, sizeof magic);
    put_u32(buf + 8, CNN_FILE_VERSION);
    put_u32(buf + 12, (uint32_t)shape->height);
    put_u32(buf + 16, (uint32_t)shape->width);
    put_u32(buf + 20, (uint32_t)shape->channels);
    put_u32(buf + 24, (uint32_t)shape->classes);
    put_u64(buf + 28, nparam);
    for (size_t i = 0; i < nparam; i++) {
        uint32_t bits;
        memcpy(&bits, &params[i], 4);
        put_u32(buf + CNN_FILE_HEADER_BYTES + 4 * i, bits);
    }
    put_u32(buf + len - 4, checksum(buf, len - 4));
    int rc = write_atomically(path, buf, len, err, errlen);
    int e = errno;
    free(buf);
    errno = e;
    return rc;
}

/* Reads all of the model file path into a new buffer, after checking its magic, version and
 * size against its header. NULL with the message and errno on failure. */
static unsigned char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot read the model file '%s': %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        errno = e;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a model file (not a regular file)", path);
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    /* The header first: a claimed size is checked against the file's before any allocation. */
    unsigned char head[CNN_FILE_HEADER_BYTES];
    ssize_t got = pread(fd, head, sizeof head, 0);
    if (got < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot read the model file '%s': %s", path, strerror(e));
        close(fd);
        errno = e;
        return NULL;
    }
    if ((size_t)got < sizeof magic || memcmp(head, magic, sizeof magic) != 0) {
        snprintf(err, errlen, "%s: not an mlbench CNN model file (its first bytes are not the "
                 "magic \"MLBCNN\\x1a\\n\"; imgclf --save-model writes one)", path);
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    if ((size_t)got < sizeof head) {
        snprintf(err, errlen, "%s: truncated model file: %zd bytes, shorter than its %u-byte "
                 "header", path, got, CNN_FILE_HEADER_BYTES);
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    uint32_t version = get_u32(head + 8);
    if (version != CNN_FILE_VERSION) {
        snprintf(err, errlen, "%s: model file version %u, this build reads version %u", path,
                 version, CNN_FILE_VERSION);
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    uint64_t count = get_u64(head + 28);
    uint64_t want = count <= (UINT64_MAX - 40) / 4 ? CNN_FILE_HEADER_BYTES + 4 * count + 4 : 0;
    if (want == 0 || (uint64_t)st.st_size != want) {
        snprintf(err, errlen, "%s: %s model file: %lld bytes, but its header's %llu parameters "
                 "make %llu", path, (uint64_t)st.st_size < want ? "truncated" : "bad",
                 (long long)st.st_size, (unsigned long long)count, (unsigned long long)want);
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    unsigned char *buf = malloc((size_t)want);
    if (!buf) {
        snprintf(err, errlen, "%s: cannot allocate the %llu bytes of the model", path,
                 (unsigned long long)want);
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    size_t off = 0;
    while (off < want) {
        ssize_t n = pread(fd, buf + off, (size_t)want - off, (off_t)off);
        if (n <= 0) {
            int e = n < 0 ? errno : EINVAL;
            snprintf(err, errlen, "cannot read the model file '%s': %s", path,
                     n < 0 ? strerror(e) : "it shrank while being read");
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        off += (size_t)n;
    }
    close(fd);
    *len = (size_t)want;
    return buf;
}

int cnn_file_load(const char *path, struct cnn_shape *shape, float **params, size_t *nparam,
                  char *err, size_t errlen)
{
    size_t len;
    unsigned char *buf = read_file(path, &len, err, errlen);
    if (!buf)
        return -1;
    uint32_t stored = get_u32(buf + len - 4), computed = checksum(buf, len - 4);
    if (stored != computed) {
        snprintf(err, errlen, "%s: corrupt model file: its CRC-32 is %08x, its contents give "
                 "%08x", path, stored, computed);
        free(buf);
        errno = EINVAL;
        return -1;
    }
    struct cnn_shape s;
    uint32_t dims[4];
    for (int i = 0; i < 4; i++)
        dims[i] = get_u32(buf + 12 + 4 * i);
    /* Above INT_MAX would wrap to a negative int: clamp, so the check names it as invalid. */
    s.height = dims[0] > INT_MAX ? -1 : (int)dims[0];
    s.width = dims[1] > INT_MAX ? -1 : (int)dims[1];
    s.channels = dims[2] > INT_MAX ? -1 : (int)dims[2];
    s.classes = dims[3] > INT_MAX ? -1 : (int)dims[3];
    if (shape_check(path, &s, err, errlen)) {
        free(buf);
        return -1;
    }
    size_t count = (size_t)get_u64(buf + 28), want = cnn_layout_of(&s).nparam;
    if (count != want) {
        snprintf(err, errlen, "%s: not a valid model file: %zu parameters, but a %dx%dx%d model "
                 "of %d classes has %zu", path, count, s.height, s.width, s.channels, s.classes,
                 want);
        free(buf);
        errno = EINVAL;
        return -1;
    }
    float *p = malloc(count * sizeof *p);
    if (!p) {
        snprintf(err, errlen, "%s: cannot allocate %zu parameters", path, count);
        free(buf);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        uint32_t bits = get_u32(buf + CNN_FILE_HEADER_BYTES + 4 * i);
        memcpy(&p[i], &bits, 4);
        if (!isfinite(p[i])) {
            snprintf(err, errlen, "%s: not a usable model: parameter %zu is %g", path, i,
                     (double)p[i]);
            free(p);
            free(buf);
            errno = EINVAL;
            return -1;
        }
    }
    free(buf);
    *shape = s;
    *params = p;
    *nparam = count;
    return 0;
}
