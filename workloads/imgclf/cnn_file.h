/* cnn_file: the model file of the small CNN (cnn.h): what `imgclf --save-model FILE` writes
 * after training and `serve --model FILE` loads (docs/workloads.md, "The model file"). Every
 * number little-endian, whatever the machine:
 *
 *   offset    size  field
 *   0         8     magic "MLBCNN\x1a\n" (the last two bytes catch text-mode and truncating
 *                   transfers, as PNG's do)
 *   8         4     version, u32: CNN_FILE_VERSION
 *   12        16    the cnn_shape: height, width, channels, classes, u32 each
 *   28        8     parameter count, u64: cnn_layout_of(shape).nparam
 *   36        4 n   the parameters, IEEE 754 fp32, in cnn_params' layout
 *   36 + 4 n  4     CRC-32 (zlib's crc32, the IEEE polynomial) of every byte before it
 *
 * 40 + 4 n bytes in all, nothing after. Pure and thread-safe (no shared state). */
#ifndef MLBENCH_WL_CNN_FILE_H
#define MLBENCH_WL_CNN_FILE_H

#include <stddef.h>

#include "imgclf/cnn.h"

#define CNN_FILE_VERSION 1u
#define CNN_FILE_HEADER_BYTES 36u /* magic, version, shape, count: where the parameters start */

/* Writes the nparam parameters of a model of the given shape to path atomically: into a
 * temporary file in path's directory, flushed to disk (fsync), then renamed over path, so that
 * a reader sees the old file or the whole new one, never a part. nparam must be the shape's
 * (cnn_layout_of). 0, or -1 with a message in err naming the path and what failed (errno kept:
 * EINVAL for a count that does not match the shape), nothing left behind. */
int cnn_file_save(const char *path, const struct cnn_shape *shape, const float *params,
                  size_t nparam, char *err, size_t errlen);

/* Reads the model file path: its shape into *shape and its parameters into *params (malloc'd,
 * *nparam floats; the caller frees them). 0, or -1 with a message in err that names the path
 * and what is wrong with errno set: EINVAL for a file that is not a valid model file (bad
 * magic, a version this build does not read, an invalid shape, a count that does not match the
 * shape, a size other than the header's, a wrong checksum, a parameter that is not finite),
 * ENOMEM, or the errno of the failed open or read. Nothing is allocated on failure; the size is
 * checked against the file's before anything is allocated. */
int cnn_file_load(const char *path, struct cnn_shape *shape, float **params, size_t *nparam,
                  char *err, size_t errlen);

#endif
