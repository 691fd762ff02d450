/* npy: NumPy .npy (format 1.0) writer (see npy.h). The header is the dict NumPy writes
 * ({'descr': ..., 'fortran_order': False, 'shape': (...), }) padded with spaces and a newline so
 * that the data starts at a multiple of 64 bytes, as NumPy itself aligns it. */
#include "logreg/npy.h"
#include "common/opts.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes per element of a supported dtype, 0 when unsupported. */
static size_t dtype_size(const char *dtype)
{
    static const struct {
        const char *name;
        size_t size;
    } dtypes[] = {{"<f4", 4}, {"<f8", 8}, {"<i4", 4}, {"<i8", 8}};
    for (size_t i = 0; dtype && i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dtype, dtypes[i].name))
            return dtypes[i].size;
    return 0;
}


int npy_write(const char *path, const char *dtype, const void *data, int ndim,
              const size_t *shape, char *err, size_t errlen)
{
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    size_t elem = dtype_size(dtype);
    if (!elem) {
        snprintf(err, errlen, "%s: dtype '%s' is not one of <f4, <f8, <i4, <i8", path,
                 dtype ? dtype : "(null)");
        return -1;
    }
    if (first != 1) {
        snprintf(err, errlen, "%s: this writer needs a little-endian machine", path);
        return -1;
    }
    if (ndim < 1 || ndim > 2) {
        snprintf(err, errlen, "%s: ndim %d is not 1 or 2", path, ndim);
        return -1;
    }
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] && count > SIZE_MAX / shape[i] / elem) {
            snprintf(err, errlen, "%s: shape too large", path);
            return -1;
        }
        count *= shape[i];
    }
    if (count && !data) {
        snprintf(err, errlen, "%s: no data for %zu elements", path, count);
        return -1;
    }

    /* 10 bytes of preamble (magic, version, header length), then the padded dict. */
    char header[256];
    int len;
    if (ndim == 1)
        len = snprintf(header, sizeof header,
                       "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", dtype,
                       shape[0]);
    else
        len = snprintf(header, sizeof header,
                       "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu), }",
                       dtype, shape[0], shape[1]);
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + 63) / 64 * 64;
    memset(header + len, ' ', padded - total);
    header[padded - 10 - 1] = '\n';
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)((padded - 10) & 0xff),
                             (unsigned char)((padded - 10) >> 8)};

    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof ".tmp.XXXXXX");
    if (!tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    /* mkstemp creates 0600; a data file is for others to read too. */
    int fail = fchmod(fd, 0644) || wl_write_all(fd, pre, sizeof pre) ||
               wl_write_all(fd, header, padded - 10) || wl_write_all(fd, data, count * elem);
    int saved = errno;
    if (close(fd) != 0 && !fail) {
        fail = 1;
        saved = errno;
    }
    if (!fail && rename(tmp, path) != 0) {
        fail = 1;
        saved = errno;
    }
    if (fail) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
