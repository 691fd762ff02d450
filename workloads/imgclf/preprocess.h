/* preprocess: the per-image work of the input pipeline after decoding: random crop with zero
 * padding, horizontal flip, conversion to float and per-channel normalisation, written straight
 * into the image's slot of an NHWC float batch. Pure, thread-safe. */
#ifndef MLBENCH_WL_PREPROCESS_H
#define MLBENCH_WL_PREPROCESS_H

#include <stdint.h>

struct rng;

struct augment {
    int pad;  /* crop offsets are drawn from [0, 2 * pad]: pad = 0 means no crop */
    int flip; /* flip horizontally with probability 1/2 */
};

/* Normalisation constants per channel: out = (pixel / 255 - mean) / std. */
struct norm {
    float mean[3], std[3];
};

/* The constants used for a dataset of `channels` channels (grey: Fashion-MNIST's mean 0.2860
 * and std 0.3530; RGB: 0.5 and 0.25, about the synthetic images'). */
struct norm preprocess_norm(int channels);

/* Writes the w x h x c image pix (uint8, HWC) into out (float, HWC, same size) as the window at
 * (ox, oy) of the image padded by pad pixels of zero on every side (ox, oy in [0, 2 * pad];
 * ox = oy = pad is the centre, the identity), mirrored left-right when flip. */
void preprocess_image(const uint8_t *pix, int w, int h, int c, int pad, int ox, int oy, int flip,
                      const struct norm *norm, float *out);

/* Draws the crop offsets and flip of one image from r and applies them (aug NULL or all zero:
 * the centre, unflipped). */
void preprocess_augment(const uint8_t *pix, int w, int h, int c, const struct augment *aug,
                        struct rng *r, const struct norm *norm, float *out);

#endif
