/* synth: the synthetic image generator of the image datasets (see synth.h). */
#include "imgclf/data/synth.h"

#include <math.h>
#include <pthread.h>

#include "common/rng.h"

#define NCLASSES 10
#define COS_BITS 12
static float cos_table[1 << COS_BITS];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* Triangular noise in [-255, 255] (sum of two random bytes less 255): a row of any size reads
 * 3 * 1024 + 16 values from an offset below 4096. */
#define NOISE_LEN (4096 + 3 * 1024 + 16)
static float noise_table[NOISE_LEN];

static void tables_init(void)
{
    for (int i = 0; i < 1 << COS_BITS; i++)
        cos_table[i] = (float)cos(2.0 * M_PI * i / (1 << COS_BITS));
    struct rng r;
    rng_seed(&r, 0x6e6f697365); /* fixed: the table is part of the generator */
    for (int i = 0; i < NOISE_LEN; i++) {
        uint64_t b = rng_next(&r);
        noise_table[i] = (float)((int)(b & 0xff) + (int)(b >> 8 & 0xff) - 255);
    }
}

static void hsv_to_rgb(double h_deg, double s, double v, float rgb[3])
{
    double h = fmod(h_deg, 360.0);
    if (h < 0)
        h += 360.0;
    double c = v * s, x = c * (1.0 - fabs(fmod(h / 60.0, 2.0) - 1.0)), m = v - c;
    double r, g, b;
    switch ((int)(h / 60.0)) {
    case 0: r = c, g = x, b = 0; break;
    case 1: r = x, g = c, b = 0; break;
    case 2: r = 0, g = c, b = x; break;
    case 3: r = 0, g = x, b = c; break;
    case 4: r = x, g = 0, b = c; break;
    default: r = c, g = 0, b = x; break;
    }
    rgb[0] = (float)(r + m);
    rgb[1] = (float)(g + m);
    rgb[2] = (float)(b + m);
}

static double uniform(struct rng *r, double lo, double hi)
{
    return lo + (hi - lo) * rng_uniform(r);
}

/* Draws image `index` of `split` (0 train, 1 val) for `seed` into rgb (size x size x 3) and
 * returns its class: a patch of oriented stripes (a grating) under a soft round window, over a
 * plain background, with noise. The class sets the stripes' orientation (class * 18 degrees;
 * the only feature that tells all ten apart), their frequency (two bands) and the hue (five
 * hues: classes c and c + 5 share one); each image draws orientation, frequency and hue jitter,
 * phase, window position and size, contrast, background and noise level from its own stream,
 * derived from (seed, split, index) alone. */
int synth_image(uint64_t seed, int split, int index, int size, unsigned char *rgb)
{
    pthread_once(&tables_once, tables_init);
    struct rng r;
    rng_seed(&r, rng_derive(rng_derive(seed, (uint64_t)split + 1), (uint64_t)index));
    int cls = index % NCLASSES;

    double theta = (cls * 18.0 + uniform(&r, -5.0, 5.0)) * M_PI / 180.0;
    double cycles = (cls % 2 ? 5.0 : 3.0) * uniform(&r, 0.85, 1.15);
    if (cycles > size / 4.0)
        cycles = size / 4.0; /* at least 4 pixels a period */
    float colour[3], back[3];
    hsv_to_rgb((cls % 5) * 72.0 + uniform(&r, -30.0, 30.0), uniform(&r, 0.5, 1.0),
               uniform(&r, 0.7, 1.0), colour);
    double grey = uniform(&r, 0.25, 0.75);
    for (int k = 0; k < 3; k++)
        back[k] = (float)(grey + uniform(&r, -0.08, 0.08));
    float contrast = (float)uniform(&r, 0.6, 1.0);
    float noise = (float)uniform(&r, 0.04, 0.16); /* grey levels per unit of noise_table */
    double cx = size * uniform(&r, 0.35, 0.65), cy = size * uniform(&r, 0.35, 0.65);
    double sigma = size * uniform(&r, 0.2, 0.3);

    /* Rows run to a multiple of 16 (the arrays have room), so that -O2 vectorises them; the
     * arrays are zeroed only because analysers cannot see that size16 >= size. */
    int size16 = (size + 15) & ~15;
    /* The window is separable (ex[x] * ey[y]); the phase runs in 32-bit fixed point (turns). */
    float ex[1024] = {0}, ey[1024] = {0};
    for (int i = 0; i < size16; i++) {
        ex[i] = (float)exp(-(i - cx) * (i - cx) / (2 * sigma * sigma));
        ey[i] = (float)exp(-(i - cy) * (i - cy) / (2 * sigma * sigma));
    }
    const double turn = 4294967296.0;
    uint32_t dtx = (uint32_t)(int64_t)llround(cycles * cos(theta) / size * turn);
    uint32_t dty = (uint32_t)(int64_t)llround(cycles * sin(theta) / size * turn);
    uint32_t t0 = (uint32_t)(rng_next(&r) >> 32);
    /* Each row reads its noise from the fixed table at an offset drawn by an inlined
     * xorshift64* (seeded from the image's stream): random numbers per pixel would cost as
     * much as the JPEG encode. */
    uint64_t ns = rng_next(&r) | 1;
    float m[1024], ms[1024];
    unsigned char plane[3][1024] = {{0}};
    for (int y = 0; y < size; y++) {
        uint32_t t = t0 + (uint32_t)y * dty;
        float wy = ey[y] * contrast;
        for (int x = 0; x < size16; x++, t += dtx) {
            m[x] = ex[x] * wy;
            ms[x] = m[x] * (0.575f + 0.425f * cos_table[t >> (32 - COS_BITS)]); /* stripes */
        }
        ns ^= ns >> 12, ns ^= ns << 25, ns ^= ns >> 27;
        const float *tri = noise_table + ((ns * 0x2545f4914f6cdd1dULL) >> 52); /* < 4096 */
        for (int k = 0; k < 3; k++) {
            float b255 = back[k] * 255.0f, c255 = colour[k] * 255.0f;
            const float *tk = tri + k * size;
            for (int x = 0; x < size16; x++) {
                float v = b255 - m[x] * b255 + ms[x] * c255 + noise * tk[x];
                int q = (int)(v + 0.5f);
                q = q < 0 ? 0 : q;
                plane[k][x] = (unsigned char)(q > 255 ? 255 : q);
            }
        }
        unsigned char *row = rgb + (size_t)y * size * 3;
        for (int x = 0; x < size; x++) {
            row[3 * x] = plane[0][x];
            row[3 * x + 1] = plane[1][x];
            row[3 * x + 2] = plane[2][x];
        }
    }
    return cls;
}

