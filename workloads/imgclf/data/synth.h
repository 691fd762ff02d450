/* synth: the generator of the synthetic image dataset (docs/datasets.md): class-structured RGB
 * images of any size, each drawn from (seed, split, index) alone, so any image can be made
 * again independently and in any order. Thread-safe. */
#ifndef MLBENCH_WL_SYNTH_H
#define MLBENCH_WL_SYNTH_H

#include <stdint.h>

/* Draws image `index` of `split` (0 train, 1 val) for `seed` into rgb (size x size x 3 bytes)
 * and returns its class, 0..9. */
int synth_image(uint64_t seed, int split, int index, int size, unsigned char *rgb);

#endif
