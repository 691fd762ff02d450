/* jpeg: JPEG encode and decode through libjpeg-turbo's TurboJPEG API. One struct jpeg per
 * thread (the handles are not shareable). Images are 8-bit, row-major, interleaved (HWC). */
#ifndef MLBENCH_WL_JPEG_H
#define MLBENCH_WL_JPEG_H

#include <stddef.h>

struct jpeg;

/* NULL if TurboJPEG cannot initialise (out of memory). */
struct jpeg *jpeg_new(void);
void jpeg_free(struct jpeg *j);

/* Encodes width x height x channels (1 = grey, 3 = RGB) at quality 1..100 (4:2:0 for RGB,
 * grey for 1 channel). *out is malloc'd (free it). 0, or -1 with jpeg_error set. */
int jpeg_encode(struct jpeg *j, const unsigned char *pixels, int width, int height, int channels,
                int quality, unsigned char **out, size_t *out_len);
/* Reads the header: dimensions and the channels the image has (1 or 3). 0 or -1 (corrupt). */
int jpeg_header(struct jpeg *j, const unsigned char *data, size_t len, int *width, int *height,
                int *channels);
/* Decodes into out (width * height * channels bytes, the caller's buffer), converting to the
 * channels asked for (1 or 3). Fails (-1, jpeg_error set) when the data is corrupt or
 * truncated, or its size is not width x height: a corrupt file is never a crash. */
int jpeg_decode(struct jpeg *j, const unsigned char *data, size_t len, int width, int height,
                int channels, unsigned char *out);
/* The last error's message (TurboJPEG's, or the size mismatch). */
const char *jpeg_error(const struct jpeg *j);

#endif
