/* idx: the IDX file reader (see idx.h), over zlib's gz* functions, which read gzip'd and plain
 * files alike. */
#include "imgclf/data/idx.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* Reads exactly n bytes; returns the number read (< n at end of file), or -1 on an error. */
static long long idx_gzread_all(gzFile f, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        size_t chunk = n - got > (1u << 30) ? (1u << 30) : n - got;
        int r = gzread(f, buf + got, (unsigned)chunk);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long long)got;
}

static const char *idx_gzerror(gzFile f)
{
    int code;
    const char *msg = gzerror(f, &code);
    if (code == Z_ERRNO)
        return strerror(errno);
    return msg && *msg ? msg : "read error";
}

int idx_read(const char *path, uint32_t magic, size_t max_bytes, struct idx *out, char *err,
             size_t errlen)
{
    memset(out, 0, sizeof *out);
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open '%s': %s", path,
                 errno ? strerror(errno) : "out of memory");
        return IDX_MISSING;
    }
    gzbuffer(f, 1 << 17);
    int rc = IDX_CORRUPT;
    unsigned char head[4 + 4 * IDX_MAX_DIMS];
    int ndim = (int)(magic & 0xff);
    if (ndim < 1 || ndim > IDX_MAX_DIMS) {
        snprintf(err, errlen, "'%s': unsupported IDX magic 0x%x asked for", path, magic);
        goto done;
    }
    size_t head_len = 4 + 4 * (size_t)ndim;
    long long got = idx_gzread_all(f, head, head_len);
    if (got < 0) {
        snprintf(err, errlen, "'%s' is corrupt: %s", path, idx_gzerror(f));
        goto done;
    }
    if (got < 4 || be32(head) != magic) {
        snprintf(err, errlen,
                 "'%s' is not an IDX file of the expected kind: magic number 0x%08x, expected "
                 "0x%08x",
                 path, got < 4 ? 0u : be32(head), magic);
        goto done;
    }
    if ((size_t)got < head_len) {
        snprintf(err, errlen, "'%s' is truncated: its header ends after %lld bytes", path, got);
        goto done;
    }
    size_t total = 1;
    for (int i = 0; i < ndim; i++) {
        uint32_t d = be32(head + 4 + 4 * i);
        out->dims[i] = d;
        if (d == 0 || total > max_bytes / d) {
            snprintf(err, errlen,
                     "'%s' is corrupt: dimension %d is %u (data limited to %zu bytes)", path,
                     i, d, max_bytes);
            goto done;
        }
        total *= d;
    }
    out->ndim = ndim;
    out->data = malloc(total);
    if (!out->data) {
        snprintf(err, errlen, "'%s': out of memory for %zu bytes", path, total);
        goto done;
    }
    out->size = total;
    got = idx_gzread_all(f, out->data, total);
    if (got < 0) {
        snprintf(err, errlen, "'%s' is corrupt: %s", path, idx_gzerror(f));
        goto done;
    }
    if ((size_t)got < total) {
        snprintf(err, errlen, "'%s' is truncated: %lld of %zu data bytes", path, got, total);
        goto done;
    }
    if (gzgetc(f) != -1) {
        snprintf(err, errlen, "'%s' is corrupt: bytes after the %zu data bytes", path, total);
        goto done;
    }
    /* The end of the data is not the end of the check: a damaged gzip trailer (CRC, length) or
     * a stream cut after the data shows up only here. */
    int code;
    gzerror(f, &code);
    if (code != Z_OK) {
        snprintf(err, errlen, "'%s' is corrupt: %s", path, idx_gzerror(f));
        goto done;
    }
    rc = IDX_OK;
done:
    gzclose(f);
    if (rc != IDX_OK)
        idx_free(out);
    return rc;
}

void idx_free(struct idx *x)
{
    free(x->data);
    memset(x, 0, sizeof *x);
}
