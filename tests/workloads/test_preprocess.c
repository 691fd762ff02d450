/* Tests of imgclf's input pipeline: preprocess (crop with padding, flip, normalisation) and the
 * loader (serial, threads, prefetch: same batches; every image once per epoch; corrupt files
 * skipped and counted; stopping mid-epoch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rng.h"
#include "imgclf/data/jpeg.h"
#include "imgclf/loader.h"
#include "imgclf/preprocess.h"

static const struct norm unit = {{0, 0, 0}, {1, 1, 1}}; /* out = pixel / 255 */

static void test_identity_and_normalise(void **state)
{
    (void)state;
    uint8_t pix[4 * 4];
    float out[16];
    for (int i = 0; i < 16; i++)
        pix[i] = (uint8_t)(i * 17);
    preprocess_image(pix, 4, 4, 1, 2, 2, 2, 0, &unit, out); /* centre window: identity */
    for (int i = 0; i < 16; i++)
        assert_float_equal(out[i], pix[i] / 255.0f, 1e-6);
    struct norm fm = preprocess_norm(1);
    preprocess_image(pix, 4, 4, 1, 0, 0, 0, 0, &fm, out);
    assert_float_equal(out[0], (0 - 0.2860f) / 0.3530f, 1e-5);
    assert_float_equal(out[15], (1 - 0.2860f) / 0.3530f, 1e-5);
}

static void test_crop_pads_with_black(void **state)
{
    (void)state;
    uint8_t pix[3 * 3 * 3];
    for (int i = 0; i < 27; i++)
        pix[i] = (uint8_t)(100 + i);
    float out[27];
    /* Window at (0, 0) of the image padded by 1: shifted right and down by one pixel. */
    preprocess_image(pix, 3, 3, 3, 1, 0, 0, 0, &unit, out);
    for (int k = 0; k < 3; k++) {
        assert_float_equal(out[k], 0, 1e-6);                 /* (0,0) padding */
        assert_float_equal(out[(1 * 3 + 1) * 3 + k], pix[k] / 255.0f, 1e-6); /* (1,1) <- (0,0) */
        assert_float_equal(out[(2 * 3 + 2) * 3 + k], pix[(1 * 3 + 1) * 3 + k] / 255.0f, 1e-6);
    }
    /* Window at (2, 2): shifted left and up; the last row and column are padding. */
    preprocess_image(pix, 3, 3, 3, 1, 2, 2, 0, &unit, out);
    assert_float_equal(out[0], pix[(1 * 3 + 1) * 3] / 255.0f, 1e-6);
    assert_float_equal(out[(2 * 3 + 0) * 3], 0, 1e-6);
    assert_float_equal(out[(0 * 3 + 2) * 3], 0, 1e-6);
}

static void test_flip_mirrors_rows(void **state)
{
    (void)state;
    uint8_t pix[2 * 4];
    for (int i = 0; i < 8; i++)
        pix[i] = (uint8_t)(i * 30);
    float out[8];
    preprocess_image(pix, 4, 2, 1, 0, 0, 0, 1, &unit, out);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 4; x++)
            assert_float_equal(out[y * 4 + x], pix[y * 4 + 3 - x] / 255.0f, 1e-6);
}

static void test_augment_draws_every_offset(void **state)
{
    (void)state;
    uint8_t pix[8 * 8];
    for (int i = 0; i < 64; i++)
        pix[i] = (uint8_t)(i + 1); /* no zero pixel: padding is recognisable */
    float out[64];
    struct augment aug = {.pad = 2, .flip = 1};
    struct rng r;
    rng_seed(&r, 7);
    int seen[5] = {0}, flipped = 0;
    for (int t = 0; t < 400; t++) {
        preprocess_augment(pix, 8, 8, 1, &aug, &r, &unit, out);
        /* Leading zero columns in row 4 tell the horizontal shift (0..2 -> 2..0 zeros). */
        int zeros = 0;
        while (zeros < 8 && out[4 * 8 + zeros] == 0)
            zeros++;
        int trailing = 0;
        while (trailing < 8 && out[4 * 8 + 7 - trailing] == 0)
            trailing++;
        assert_true(zeros <= 2 && trailing <= 2);
        seen[zeros == 0 ? 2 + trailing : 2 - zeros]++;
        int a = zeros, v = (int)lrintf(out[4 * 8 + a] * 255);
        int w = (int)lrintf(out[4 * 8 + a + 1] * 255);
        flipped += w < v;
    }
    for (int i = 0; i < 5; i++)
        assert_true(seen[i] > 30);
    assert_true(flipped > 120 && flipped < 280);
}

/* A directory of n small grey JPEGs whose first pixel encodes the image number. */
struct files {
    char dir[64];
    struct dataset_split split;
};

static void make_files(struct files *f, int n, int corrupt_every)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/test_preprocess.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->split.count = n;
    f->split.paths = calloc((size_t)n, sizeof *f->split.paths);
    f->split.labels = calloc((size_t)n, sizeof *f->split.labels);
    struct jpeg *j = jpeg_new();
    assert_non_null(j);
    for (int i = 0; i < n; i++) {
        uint8_t pix[8 * 8];
        for (int p = 0; p < 64; p++)
            pix[p] = (uint8_t)(i * 2 + 10); /* flat: survives JPEG nearly exactly */
        unsigned char *data;
        size_t len;
        assert_int_equal(jpeg_encode(j, pix, 8, 8, 1, 95, &data, &len), 0);
        char path[128];
        snprintf(path, sizeof path, "%s/%03d.jpg", f->dir, i);
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        size_t keep = corrupt_every && i % corrupt_every == corrupt_every - 1 ? len / 3 : len;
        assert_int_equal(fwrite(data, 1, keep, fp), keep);
        fclose(fp);
        free(data);
        f->split.paths[i] = strdup(path);
        f->split.labels[i] = i;
    }
    jpeg_free(j);
}

static void free_files(struct files *f)
{
    for (int i = 0; i < f->split.count; i++) {
        unlink(f->split.paths[i]);
        free(f->split.paths[i]);
    }
    rmdir(f->dir);
    free(f->split.paths);
    free(f->split.labels);
}

/* The epoch's batches, flattened: labels in order and the first value of each image. */
static int read_epoch(const struct dataset_split *split, int threads, int prefetch, int batch,
                      int *labels, float *first, long *skipped)
{
    struct loader_config cfg = {
        .split = split, .width = 8, .height = 8, .channels = 1, .batch = batch,
        .threads = threads, .prefetch = prefetch, .shuffle = 1, .aug = {.pad = 1, .flip = 1},
        .seed = 42,
    };
    char err[128];
    struct loader *l = loader_start(&cfg, 3, err, sizeof err);
    assert_non_null(l);
    int n = 0;
    const struct batch *b;
    while ((b = loader_next(l))) {
        for (int i = 0; i < b->n; i++) {
            labels[n] = b->labels[i];
            first[n] = b->x[(size_t)i * 64 + 3 * 8 + 3]; /* inside any crop */
            n++;
        }
    }
    *skipped = loader_skipped(l, NULL, NULL);
    loader_free(l);
    return n;
}

static void test_loader_same_batches_any_threads(void **state)
{
    (void)state;
    struct files f;
    make_files(&f, 53, 0);
    int ref_labels[53], labels[53];
    float ref_first[53], first[53];
    long skipped;
    int n = read_epoch(&f.split, 0, 0, 8, ref_labels, ref_first, &skipped);
    assert_int_equal(n, 53);
    assert_int_equal(skipped, 0);
    int seen[53] = {0}, moved = 0;
    for (int i = 0; i < 53; i++) {
        seen[ref_labels[i]]++;
        moved += ref_labels[i] != i;
        /* Each image's pixels encode its number: the label and the data travel together. */
        float expect = ((ref_labels[i] * 2 + 10) / 255.0f - 0.2860f) / 0.3530f;
        assert_float_equal(ref_first[i], expect, 0.02);
    }
    for (int i = 0; i < 53; i++)
        assert_int_equal(seen[i], 1);
    assert_true(moved > 40); /* shuffled */
    const int settings[][2] = {{1, 0}, {2, 0}, {3, 2}, {4, 1}, {2, 8}};
    for (size_t s = 0; s < sizeof settings / sizeof settings[0]; s++) {
        n = read_epoch(&f.split, settings[s][0], settings[s][1], 8, labels, first, &skipped);
        assert_int_equal(n, 53);
        assert_memory_equal(labels, ref_labels, sizeof labels);
        assert_memory_equal(first, ref_first, sizeof first);
    }
    free_files(&f);
}

static void test_loader_skips_corrupt_files(void **state)
{
    (void)state;
    struct files f;
    make_files(&f, 30, 5); /* 6 truncated files */
    int labels[30];
    float first[30];
    long skipped;
    for (int threads = 0; threads <= 2; threads++) {
        int n = read_epoch(&f.split, threads, threads ? 2 : 0, 7, labels, first, &skipped);
        assert_int_equal(n, 24);
        assert_int_equal(skipped, 6);
        for (int i = 0; i < n; i++)
            assert_int_not_equal(labels[i] % 5, 4);
    }
    free_files(&f);
}

static void test_loader_stops_mid_epoch(void **state)
{
    (void)state;
    struct files f;
    make_files(&f, 40, 0);
    struct loader_config cfg = {
        .split = &f.split, .width = 8, .height = 8, .channels = 1, .batch = 4, .threads = 3,
        .prefetch = 3, .seed = 1,
    };
    char err[128];
    struct loader *l = loader_start(&cfg, 0, err, sizeof err);
    assert_non_null(l);
    assert_int_equal(loader_batches(l), 10);
    const struct batch *b = loader_next(l);
    assert_non_null(b);
    assert_int_equal(b->n, 4);
    assert_int_equal(b->labels[0], 0); /* not shuffled */
    loader_free(l);                    /* threads still busy ahead: must stop cleanly */
    free_files(&f);
}

static void test_wrong_size_image_is_skipped(void **state)
{
    (void)state;
    struct files f;
    make_files(&f, 4, 0);
    struct loader_config cfg = {
        .split = &f.split, .width = 16, .height = 16, .channels = 1, .batch = 4, .seed = 1,
    };
    char err[128];
    struct loader *l = loader_start(&cfg, 0, err, sizeof err);
    assert_non_null(l);
    const struct batch *b = loader_next(l);
    assert_non_null(b);
    assert_int_equal(b->n, 0);
    const char *path, *reason;
    assert_int_equal(loader_skipped(l, &path, &reason), 4);
    assert_string_equal(path, f.split.paths[0]);
    assert_non_null(reason);
    assert_null(loader_next(l));
    loader_free(l);
    free_files(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_and_normalise),
        cmocka_unit_test(test_crop_pads_with_black),
        cmocka_unit_test(test_flip_mirrors_rows),
        cmocka_unit_test(test_augment_draws_every_offset),
        cmocka_unit_test(test_loader_same_batches_any_threads),
        cmocka_unit_test(test_loader_skips_corrupt_files),
        cmocka_unit_test(test_loader_stops_mid_epoch),
        cmocka_unit_test(test_wrong_size_image_is_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
