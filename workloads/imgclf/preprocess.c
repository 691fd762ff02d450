/* preprocess: random crop with padding, flip, normalise to float (see preprocess.h). */
#include "imgclf/preprocess.h"

#include <string.h>

#include "common/rng.h"

struct norm preprocess_norm(int channels)
{
    struct norm n;
    for (int i = 0; i < 3; i++) {
        n.mean[i] = channels == 1 ? 0.2860f : 0.5f;
        n.std[i] = channels == 1 ? 0.3530f : 0.25f;
    }
    return n;
}

void preprocess_image(const uint8_t *pix, int w, int h, int c, int pad, int ox, int oy, int flip,
                      const struct norm *norm, float *out)
{
    /* out = pixel * scale + bias per channel: one multiply-add per value in the loop. */
    float scale[3], bias[3], zero[3];
    for (int k = 0; k < c; k++) {
        scale[k] = 1.0f / (255.0f * norm->std[k]);
        bias[k] = -norm->mean[k] / norm->std[k];
        zero[k] = bias[k]; /* the padding is black: pixel value 0 */
    }
    int dx = ox - pad, dy = oy - pad; /* source = destination + (dx, dy) */
    for (int y = 0; y < h; y++) {
        float *row = out + (size_t)y * w * c;
        int sy = y + dy;
        if (sy < 0 || sy >= h) {
            for (int x = 0; x < w; x++)
                for (int k = 0; k < c; k++)
                    row[x * c + k] = zero[k];
            continue;
        }
        const uint8_t *src = pix + (size_t)sy * w * c;
        for (int x = 0; x < w; x++) {
            int sx = (flip ? w - 1 - x : x) + dx;
            float *o = row + x * c;
            if (sx < 0 || sx >= w) {
                for (int k = 0; k < c; k++)
                    o[k] = zero[k];
            } else if (c == 1) {
                o[0] = (float)src[sx] * scale[0] + bias[0];
            } else {
                for (int k = 0; k < c; k++)
                    o[k] = (float)src[sx * c + k] * scale[k] + bias[k];
            }
        }
    }
}

void preprocess_augment(const uint8_t *pix, int w, int h, int c, const struct augment *aug,
                        struct rng *r, const struct norm *norm, float *out)
{
    int pad = aug ? aug->pad : 0;
    int ox = pad, oy = pad, flip = 0;
    if (pad > 0) {
        ox = (int)rng_below(r, (uint32_t)(2 * pad + 1));
        oy = (int)rng_below(r, (uint32_t)(2 * pad + 1));
    }
    if (aug && aug->flip)
        flip = (int)(rng_next(r) >> 63);
    preprocess_image(pix, w, h, c, pad, ox, oy, flip, norm, out);
}
