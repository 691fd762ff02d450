/* idx: reads the IDX files of MNIST-style datasets (Fashion-MNIST), gzip'd or not, with zlib.
 * An IDX file is a big-endian header (magic 0x0000TTNN: type TT = 0x08 for unsigned bytes, NN
 * dimensions, then NN 32-bit sizes) followed by the data. */
#ifndef MLBENCH_WL_IDX_H
#define MLBENCH_WL_IDX_H

#include <stddef.h>
#include <stdint.h>

#define IDX_MAX_DIMS 3

struct idx {
    int ndim;
    uint32_t dims[IDX_MAX_DIMS];
    unsigned char *data; /* dims[0] * ... * dims[ndim - 1] bytes, malloc'd */
    size_t size;         /* bytes in data */
};

/* Result of idx_read: the file could not be opened (errno in the message), or it is not what
 * was expected. */
enum { IDX_OK = 0, IDX_MISSING = -1, IDX_CORRUPT = -2 };

/* Reads path, which must have the magic number `magic` (0x801: 1-d bytes, 0x803: 3-d bytes)
 * and hold at most max_bytes of data, into *out (zeroed on error; free with idx_free).
 * Trailing bytes after the data are an error. Returns IDX_OK, or an error with a message
 * naming the path in err. Thread-safe. */
int idx_read(const char *path, uint32_t magic, size_t max_bytes, struct idx *out, char *err,
             size_t errlen);
void idx_free(struct idx *x);

#endif
