/* jpeg: JPEG encode and decode over libjpeg-turbo's TurboJPEG 2.x API (see jpeg.h).
 *
 * Choices the header leaves open:
 *  - Encoding uses the accurate integer DCT (TJFLAG_ACCURATEDCT; TurboJPEG's own default when
 *    compressing is the fast one), so the datasets we write are as close to the pixels as the
 *    quality allows. Encoding is done once per dataset; its speed matters little.
 *  - Decoding uses TurboJPEG's defaults: the accurate integer IDCT and "fancy" (smooth) chroma
 *    upsampling. These are also Pillow's defaults (Image.open + load with libjpeg), so the input
 *    pipeline's decode is compared with Pillow's like for like.
 *  - Every libjpeg warning is an error (TJFLAG_STOPONWARNING). libjpeg reports a truncated file
 *    or damaged entropy data as a warning and fills the rest of the image with grey; training
 *    on such an image silently would be wrong, and the files we decode are ones we wrote.
 *    The message then says it was a warning ("corrupt JPEG data: ...").
 *  - After any decode failure the decompressor is replaced (see jpeg_reset_dec), and a header
 *    without dimensions (a stream cut inside its tables) is an error.
 *  - The API is the 2.x one (tjInitCompress and friends): the tj3 API needs 3.0.
 */
#include "imgclf/data/jpeg.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

struct jpeg {
    tjhandle enc;
    tjhandle dec;
    unsigned char *enc_buf; /* worst-case output buffer of the encoder, kept between calls */
    unsigned long enc_cap;
    char err[256];
};

static void jpeg_set_error(struct jpeg *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void jpeg_set_error(struct jpeg *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err, sizeof j->err, fmt, ap);
    va_end(ap);
}

/* After a failed header read, TurboJPEG 2.1's decompressor stays inside the header it was
 * parsing: every later call on the handle then fails ("Bogus DQT index"). A new handle after
 * any decode failure is the reliable reset (failures are rare; the cost does not matter). */
static void jpeg_reset_dec(struct jpeg *j)
{
    if (j->dec)
        tjDestroy(j->dec);
    j->dec = tjInitDecompress();
}

static int jpeg_have_dec(struct jpeg *j)
{
    if (j->dec)
        return 1;
    j->dec = tjInitDecompress();
    if (!j->dec)
        jpeg_set_error(j, "TurboJPEG cannot initialise a decompressor (out of memory)");
    return j->dec != NULL;
}

/* Copies TurboJPEG's message for handle h, saying whether it came from a warning. */
static void jpeg_set_tj_error(struct jpeg *j, tjhandle h, const char *what)
{
    const char *msg = tjGetErrorStr2(h);
    if (!msg || !*msg)
        msg = "unknown TurboJPEG error";
    if (tjGetErrorCode(h) == TJERR_WARNING)
        jpeg_set_error(j, "%s: corrupt JPEG data: %s", what, msg);
    else
        jpeg_set_error(j, "%s: %s", what, msg);
}

struct jpeg *jpeg_new(void)
{
    struct jpeg *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->enc = tjInitCompress();
    j->dec = tjInitDecompress();
    if (!j->enc || !j->dec) {
        jpeg_free(j);
        return NULL;
    }
    return j;
}

void jpeg_free(struct jpeg *j)
{
    if (!j)
        return;
    if (j->enc)
        tjDestroy(j->enc);
    if (j->dec)
        tjDestroy(j->dec);
    free(j->enc_buf);
    free(j);
}

const char *jpeg_error(const struct jpeg *j)
{
    return j->err;
}

/* TurboJPEG takes int dimensions and pitches: keep width * channels and the buffer in range. */
static int jpeg_check_size(struct jpeg *j, int width, int height, int channels)
{
    if (channels != 1 && channels != 3) {
        jpeg_set_error(j, "channels %d: must be 1 (grey) or 3 (RGB)", channels);
        return -1;
    }
    if (width <= 0 || height <= 0 || width > 65500 || height > 65500) {
        jpeg_set_error(j, "image size %dx%d: must be 1x1 to 65500x65500", width, height);
        return -1;
    }
    return 0;
}

int jpeg_encode(struct jpeg *j, const unsigned char *pixels, int width, int height, int channels,
                int quality, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (jpeg_check_size(j, width, height, channels) < 0)
        return -1;
    if (quality < 1 || quality > 100) {
        jpeg_set_error(j, "JPEG quality %d: must be 1 to 100", quality);
        return -1;
    }
    int subsamp = channels == 1 ? TJSAMP_GRAY : TJSAMP_420;
    int format = channels == 1 ? TJPF_GRAY : TJPF_RGB;
    unsigned long cap = tjBufSize(width, height, subsamp);
    if (cap == (unsigned long)-1) {
        jpeg_set_tj_error(j, NULL, "encode");
        return -1;
    }
    /* The encoder writes into our worst-case buffer (TJFLAG_NOREALLOC), kept for the next
     * call; the result is copied into an exact-size malloc'd one that the caller frees with
     * free() (never tjFree()). */
    if (cap > j->enc_cap) {
        unsigned char *grown = malloc(cap);
        if (!grown) {
            jpeg_set_error(j, "encode: out of memory (%lu bytes)", cap);
            return -1;
        }
        free(j->enc_buf);
        j->enc_buf = grown;
        j->enc_cap = cap;
    }
    unsigned long len = j->enc_cap;
    if (tjCompress2(j->enc, pixels, width, width * channels, height, format, &j->enc_buf, &len,
                    subsamp, quality, TJFLAG_NOREALLOC | TJFLAG_ACCURATEDCT) != 0) {
        jpeg_set_tj_error(j, j->enc, "encode");
        return -1;
    }
    unsigned char *copy = malloc(len);
    if (!copy) {
        jpeg_set_error(j, "encode: out of memory (%lu bytes)", len);
        return -1;
    }
    memcpy(copy, j->enc_buf, len);
    *out = copy;
    *out_len = len;
    return 0;
}

int jpeg_header(struct jpeg *j, const unsigned char *data, size_t len, int *width, int *height,
                int *channels)
{
    int w = 0, h = 0, subsamp = -1, colorspace = -1;
    if (!data || len == 0) {
        jpeg_set_error(j, "not a JPEG file: no data (0 bytes)");
        return -1;
    }
    if (len > ULONG_MAX) {
        jpeg_set_error(j, "JPEG data too large (%zu bytes)", len);
        return -1;
    }
    if (!jpeg_have_dec(j))
        return -1;
    if (tjDecompressHeader3(j->dec, data, (unsigned long)len, &w, &h, &subsamp, &colorspace) != 0) {
        jpeg_set_tj_error(j, j->dec, "header");
        jpeg_reset_dec(j);
        return -1;
    }
    /* A stream cut inside its tables reads as a "tables-only" JPEG: success, no image. */
    if (w <= 0 || h <= 0) {
        jpeg_set_error(j, "header: no image in the JPEG data (%zu bytes; truncated?)", len);
        jpeg_reset_dec(j);
        return -1;
    }
    /* TurboJPEG 2.x cannot convert CMYK/YCCK to RGB or grey: say so here, not at decode. */
    if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
        jpeg_set_error(j, "CMYK JPEG images are not supported (%dx%d)", w, h);
        return -1;
    }
    *width = w;
    *height = h;
    *channels = colorspace == TJCS_GRAY ? 1 : 3;
    return 0;
}

int jpeg_decode(struct jpeg *j, const unsigned char *data, size_t len, int width, int height,
                int channels, unsigned char *out)
{
    int w, h, c;
    if (jpeg_check_size(j, width, height, channels) < 0)
        return -1;
    if (jpeg_header(j, data, len, &w, &h, &c) < 0)
        return -1;
    if (w != width || h != height) {
        jpeg_set_error(j, "JPEG image is %dx%d, expected %dx%d", w, h, width, height);
        return -1;
    }
    int format = channels == 1 ? TJPF_GRAY : TJPF_RGB;
    if (tjDecompress2(j->dec, data, (unsigned long)len, out, width, width * channels, height,
                      format, TJFLAG_STOPONWARNING) != 0) {
        jpeg_set_tj_error(j, j->dec, "decode");
        jpeg_reset_dec(j);
        return -1;
    }
    return 0;
}
