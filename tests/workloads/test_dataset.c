/* Tests of the JPEG wrapper (workloads/imgclf/data/jpeg.c) and the dataset preparation and listing
 * (dataset.c, idx.c): round trips, corrupt data, the synthetic layout and its determinism,
 * reuse and redo, refusals, and Fashion-MNIST from a small fake IDX set written here. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <setjmp.h>
#include <cmocka.h>

#include "imgclf/data/dataset.h"
#include "imgclf/data/jpeg.h"

static char tmp_root[256];

static char *path_in_tmp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A path under this run's temporary folder (static buffers, rotated: valid for a while). */
static char *path_in_tmp(const char *fmt, ...)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    int n = snprintf(b, sizeof bufs[0], "%s/", tmp_root);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, sizeof bufs[0] - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0; /* go on: leave as little behind as possible */
}

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/test_dataset.XXXXXX");
    assert_non_null(mkdtemp(tmp_root));
    unsetenv("MLBENCH_DATA_DIR");
    return 0;
}

static int teardown_tmp(void **state)
{
    (void)state;
    nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    unsigned char *data;
    assert_int_equal(dataset_read_file(path, &data, len), 0);
    return data;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- jpeg ---- */

static void make_image(unsigned char *px, int w, int h, int c)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++)
                px[(y * w + x) * c + k] = (unsigned char)(40 + x + 2 * y + 30 * k);
}

static double mean_abs_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += abs((int)a[i] - (int)b[i]);
    return s / (double)n;
}

static void roundtrip(int w, int h, int c)
{
    struct jpeg *j = jpeg_new();
    assert_non_null(j);
    size_t n = (size_t)w * h * c;
    unsigned char *px = malloc(n), *back = malloc((size_t)w * h * 3), *jpg;
    size_t len;
    make_image(px, w, h, c);
    assert_int_equal(jpeg_encode(j, px, w, h, c, 95, &jpg, &len), 0);
    assert_true(len > 100 && jpg[0] == 0xff && jpg[1] == 0xd8);
    int hw, hh, hc;
    assert_int_equal(jpeg_header(j, jpg, len, &hw, &hh, &hc), 0);
    assert_int_equal(hw, w);
    assert_int_equal(hh, h);
    assert_int_equal(hc, c);
    assert_int_equal(jpeg_decode(j, jpg, len, w, h, c, back), 0);
    assert_true(mean_abs_diff(px, back, n) < 2.0);
    /* converting: grey -> RGB gives R = G = B; RGB -> grey gives the luma */
    int other = c == 1 ? 3 : 1;
    assert_int_equal(jpeg_decode(j, jpg, len, w, h, other, back), 0);
    if (c == 1)
        for (int i = 0; i < w * h; i++) {
            assert_int_equal(back[3 * i], back[3 * i + 1]);
            assert_true(abs((int)back[3 * i] - px[i]) < 12);
        }
    free(jpg);
    free(px);
    free(back);
    jpeg_free(j);
}

static void test_jpeg_roundtrip_grey(void **state)
{
    (void)state;
    roundtrip(28, 28, 1);
    roundtrip(33, 17, 1);
}

static void test_jpeg_roundtrip_rgb(void **state)
{
    (void)state;
    roundtrip(48, 40, 3);
    roundtrip(31, 9, 3);
}

static void test_jpeg_corrupt(void **state)
{
    (void)state;
    struct jpeg *j = jpeg_new();
    int w = 40, h = 32;
    unsigned char px[40 * 32 * 3], out[40 * 32 * 3], *jpg;
    size_t len;
    make_image(px, w, h, 3);
    assert_int_equal(jpeg_encode(j, px, w, h, 3, 90, &jpg, &len), 0);
    int hw, hh, hc;

    /* zero length, and garbage */
    assert_int_equal(jpeg_header(j, NULL, 0, &hw, &hh, &hc), -1);
    assert_true(strlen(jpeg_error(j)) > 0);
    assert_int_equal(jpeg_decode(j, jpg, 0, w, h, 3, out), -1);
    unsigned char garbage[500];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (unsigned char)(i * 7919 >> 3);
    assert_int_equal(jpeg_decode(j, garbage, sizeof garbage, w, h, 3, out), -1);
    assert_true(strlen(jpeg_error(j)) > 0);
    garbage[0] = 0xff, garbage[1] = 0xd8; /* a JPEG start, then garbage */
    assert_int_equal(jpeg_decode(j, garbage, sizeof garbage, w, h, 3, out), -1);

    /* every truncation fails (the last ones lose only the EOI marker), and leaves the handle
     * usable (TurboJPEG 2.1's would not be after a cut inside the tables) */
    for (size_t cut = 0; cut < len; cut++) {
        if (jpeg_decode(j, jpg, cut, w, h, 3, out) != -1)
            fail_msg("a JPEG cut to %zu of %zu bytes decoded", cut, len);
        assert_true(strlen(jpeg_error(j)) > 0);
        if (jpeg_decode(j, jpg, len, w, h, 3, out) != 0)
            fail_msg("after a cut to %zu bytes: %s", cut, jpeg_error(j));
    }
    assert_int_equal(jpeg_decode(j, jpg, len - 40, w, h, 3, out), -1);
    assert_non_null(strstr(jpeg_error(j), "corrupt JPEG data"));

    /* damaged entropy data: -1 or a decoded image, never a crash (ASan checks) */
    unsigned char *bad = malloc(len);
    for (size_t i = len / 3; i < len - 2; i += 7) {
        memcpy(bad, jpg, len);
        bad[i] ^= 0x5a;
        jpeg_decode(j, bad, len, w, h, 3, out);
    }
    free(bad);

    /* wrong size, bad arguments */
    assert_int_equal(jpeg_decode(j, jpg, len, w + 1, h, 3, out), -1);
    assert_non_null(strstr(jpeg_error(j), "expected 41x32"));
    assert_int_equal(jpeg_decode(j, jpg, len, w, h, 2, out), -1);
    unsigned char *o;
    size_t ol;
    assert_int_equal(jpeg_encode(j, px, w, h, 3, 0, &o, &ol), -1);
    assert_null(o);
    assert_int_equal(jpeg_encode(j, px, 0, h, 3, 90, &o, &ol), -1);

    /* and the handle still works */
    assert_int_equal(jpeg_decode(j, jpg, len, w, h, 3, out), 0);
    free(jpg);
    jpeg_free(j);
}

/* ---- dataset_read_file, dataset_default_dir ---- */

static void test_read_file(void **state)
{
    (void)state;
    const char *p = path_in_tmp("f.bin");
    FILE *f = fopen(p, "w");
    fputs("hello", f);
    fclose(f);
    size_t len;
    unsigned char *d = read_all(p, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(d, "hello", 5);
    free(d);
    f = fopen(p, "w");
    fclose(f);
    d = read_all(p, &len);
    assert_int_equal(len, 0);
    free(d);
    assert_int_equal(dataset_read_file(path_in_tmp("none"), &d, &len), -1);
    assert_int_equal(errno, ENOENT);
    assert_null(d);
    assert_int_equal(dataset_read_file(tmp_root, &d, &len), -1);
    assert_int_equal(errno, EISDIR);
}

static void test_default_dir(void **state)
{
    (void)state;
    struct dataset_spec s = {.source = DATASET_SYNTHETIC, .image_size = 32, .seed = 7};
    setenv("MLBENCH_DATA_DIR", "/data", 1);
    char *d = dataset_default_dir(&s);
    assert_string_equal(d, "/data/synthetic-32-s7");
    free(d);
    unsetenv("MLBENCH_DATA_DIR");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    s.source = DATASET_FASHION_MNIST;
    d = dataset_default_dir(&s);
    assert_string_equal(d, "/xdg/mlbench/datasets/fashion-mnist");
    free(d);
    unsetenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *saved = home ? strdup(home) : NULL;
    setenv("HOME", "/h", 1);
    d = dataset_default_dir(&s);
    assert_string_equal(d, "/h/.cache/mlbench/datasets/fashion-mnist");
    free(d);
    if (saved)
        setenv("HOME", saved, 1);
    free(saved);
}

/* ---- synthetic ---- */

static struct dataset_spec synth_spec(const char *dir, uint64_t seed)
{
    return (struct dataset_spec){.source = DATASET_SYNTHETIC, .dir = dir, .image_size = 16,
                                 .train_count = 23, .val_count = 7, .seed = seed};
}

static void open_ok(const struct dataset_spec *s, struct dataset *d)
{
    char err[1024];
    int rc = dataset_open(s, d, err, sizeof err);
    if (rc != DATASET_OK)
        fail_msg("dataset_open: %d: %s", rc, err);
}

static void check_synth_layout(const struct dataset *d, int train, int val)
{
    assert_string_equal(d->source, "synthetic");
    assert_int_equal(d->width, 16);
    assert_int_equal(d->height, 16);
    assert_int_equal(d->channels, 3);
    assert_int_equal(d->classes, 10);
    assert_string_equal(d->class_names[0], "0-class0");
    assert_string_equal(d->class_names[9], "9-class9");
    assert_int_equal(d->train.count, train);
    assert_int_equal(d->val.count, val);
    const struct dataset_split *sp[2] = {&d->train, &d->val};
    const char *names[2] = {"train", "val"};
    struct jpeg *j = jpeg_new();
    unsigned char px[16 * 16 * 3];
    for (int s = 0; s < 2; s++) {
        /* in order of class, then number: class c holds c, c + 10, ... */
        int i = 0;
        for (int c = 0; c < 10; c++)
            for (int n = c; n < sp[s]->count; n += 10, i++) {
                char want[1024];
                snprintf(want, sizeof want, "%s/%s/%d-class%d/%05d.jpg", d->dir, names[s], c, c,
                         n);
                assert_string_equal(sp[s]->paths[i], want);
                assert_int_equal(sp[s]->labels[i], c);
            }
        assert_int_equal(i, sp[s]->count);
        size_t len;
        unsigned char *data = read_all(sp[s]->paths[sp[s]->count - 1], &len);
        assert_int_equal(jpeg_decode(j, data, len, 16, 16, 3, px), 0);
        free(data);
    }
    jpeg_free(j);
}

static int files_equal(const char *a, const char *b)
{
    size_t la, lb;
    unsigned char *da = read_all(a, &la), *db = read_all(b, &lb);
    int eq = la == lb && memcmp(da, db, la) == 0;
    free(da);
    free(db);
    return eq;
}

static void test_synthetic_layout_and_determinism(void **state)
{
    (void)state;
    struct dataset a, b, c;
    struct dataset_spec s = synth_spec(path_in_tmp("deep/er/a"), 5); /* mkdir -p */
    open_ok(&s, &a);
    assert_int_equal(a.prepared_now, 1);
    check_synth_layout(&a, 23, 7);
    assert_true(exists(path_in_tmp("deep/er/a/MANIFEST")));
    assert_false(exists(path_in_tmp("deep/er/a/MANIFEST.tmp")));

    s = synth_spec(path_in_tmp("b"), 5);
    open_ok(&s, &b);
    s = synth_spec(path_in_tmp("c"), 6);
    open_ok(&s, &c);
    int same_c = 0;
    for (int i = 0; i < a.train.count; i++) {
        assert_true(files_equal(a.train.paths[i], b.train.paths[i]));
        same_c += files_equal(a.train.paths[i], c.train.paths[i]);
    }
    for (int i = 0; i < a.val.count; i++) {
        assert_true(files_equal(a.val.paths[i], b.val.paths[i]));
        assert_false(files_equal(a.train.paths[i], a.val.paths[i])); /* splits differ */
    }
    assert_int_equal(same_c, 0);
    dataset_free(&a);
    dataset_free(&b);
    dataset_free(&c);
}

static void test_synthetic_reuse_and_redo(void **state)
{
    (void)state;
    struct dataset d;
    struct dataset_spec s = synth_spec(path_in_tmp("r"), 9);
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 1);
    struct stat before, after;
    char first[1024];
    snprintf(first, sizeof first, "%s", d.train.paths[0]);
    assert_int_equal(stat(first, &before), 0);
    dataset_free(&d);

    open_ok(&s, &d); /* reused */
    assert_int_equal(d.prepared_now, 0);
    check_synth_layout(&d, 23, 7);
    assert_int_equal(stat(first, &after), 0);
    assert_int_equal(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
    assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
    assert_int_equal(before.st_ino, after.st_ino);
    dataset_free(&d);

    s.train_count = 13; /* a different request: redone, nothing stale left */
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 1);
    check_synth_layout(&d, 13, 7);
    assert_false(exists(path_in_tmp("r/train/3-class3/00013.jpg")));
    dataset_free(&d);

    /* a deleted file: the listing disagrees with the MANIFEST, so it is redone */
    assert_int_equal(unlink(path_in_tmp("r/val/4-class4/00004.jpg")), 0);
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 1);
    check_synth_layout(&d, 13, 7);
    dataset_free(&d);
}

struct opener {
    struct dataset_spec spec;
    struct dataset d;
    int rc;
};

static void *open_thread(void *arg)
{
    struct opener *o = arg;
    char err[512];
    o->rc = dataset_open(&o->spec, &o->d, err, sizeof err);
    return NULL;
}

static void test_concurrent_prepare(void **state)
{
    (void)state;
    /* flock locks belong to open file descriptions, so two threads exclude each other as two
     * processes would */
    struct opener o[2] = {{.spec = synth_spec(path_in_tmp("conc"), 3)},
                          {.spec = synth_spec(path_in_tmp("conc"), 3)}};
    o[0].spec.train_count = o[1].spec.train_count = 200;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, open_thread, &o[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(o[0].rc, DATASET_OK);
    assert_int_equal(o[1].rc, DATASET_OK);
    assert_int_equal(o[0].d.prepared_now + o[1].d.prepared_now, 1);
    assert_int_equal(o[0].d.train.count, 200);
    assert_int_equal(o[1].d.train.count, 200);
    dataset_free(&o[0].d);
    dataset_free(&o[1].d);
}

static void test_refusals(void **state)
{
    (void)state;
    struct dataset d;
    char err[1024];
    /* foreign files: refused, untouched, no lock file left behind */
    mkdir(path_in_tmp("foreign"), 0755);
    FILE *f = fopen(path_in_tmp("foreign/foo.txt"), "w");
    fclose(f);
    struct dataset_spec s = synth_spec(path_in_tmp("foreign"), 1);
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    assert_non_null(strstr(err, "'foo.txt'"));
    assert_non_null(strstr(err, "--data-dir"));
    assert_null(d.dir);
    assert_true(exists(path_in_tmp("foreign/foo.txt")));
    assert_false(exists(path_in_tmp("foreign/.mlbench-lock")));

    /* a parent that is a file */
    f = fopen(path_in_tmp("plain"), "w");
    fclose(f);
    s = synth_spec(path_in_tmp("plain/sub"), 1);
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    assert_non_null(strstr(err, "plain"));
    assert_non_null(strstr(err, "--data-dir"));

    /* bad requests */
    s = synth_spec(path_in_tmp("bad"), 1);
    s.image_size = 4;
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    assert_non_null(strstr(err, "4"));
    s.image_size = 16;
    s.train_count = -1;
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    assert_false(exists(path_in_tmp("bad")));
}

static void test_unwritable(void **state)
{
    (void)state;
    if (geteuid() == 0) {
        print_message("skipped: running as root, where directory permissions do not bind\n");
        skip();
        return;
    }
    struct dataset d;
    char err[1024];
    mkdir(path_in_tmp("ro"), 0555);
    struct dataset_spec s = synth_spec(path_in_tmp("ro"), 1);
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    assert_non_null(strstr(err, "ro"));
    assert_non_null(strstr(err, "--data-dir"));
    s = synth_spec(path_in_tmp("ro/sub/deeper"), 1);
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    assert_non_null(strstr(err, "Permission denied"));

    /* a prepared dataset made read-only is still reused */
    s = synth_spec(path_in_tmp("ro2"), 1);
    open_ok(&s, &d);
    dataset_free(&d);
    chmod(path_in_tmp("ro2"), 0555);
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 0);
    dataset_free(&d);
    chmod(path_in_tmp("ro2"), 0755); /* so that the teardown can remove it */
    chmod(path_in_tmp("ro"), 0755);
}

/* ---- fashion-mnist from fake IDX files ---- */

#define FAKE_TRAIN 30
#define FAKE_TEST 10

static void put_be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8), b[3] = (unsigned char)v;
}

static void write_idx(const char *dir, const char *name, uint32_t magic, const uint32_t *dims,
                      int ndim, const unsigned char *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gzFile f = gzopen(path, "wb");
    assert_non_null(f);
    unsigned char head[16];
    put_be32(head, magic);
    for (int i = 0; i < ndim; i++)
        put_be32(head + 4 + 4 * i, dims[i]);
    assert_int_equal(gzwrite(f, head, 4 + 4 * (unsigned)ndim), 4 + 4 * ndim);
    assert_int_equal(gzwrite(f, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(f), Z_OK);
}

static unsigned char fake_pixel(int split, int n, int i)
{
    return (unsigned char)(split * 50 + n * 3 + (i % 28) * 4 + (i / 28) * 2);
}

static int fake_label(int split, int n)
{
    return (n * 7 + split * 3) % 10;
}

enum damage { INTACT, BAD_MAGIC, BAD_LABEL, BAD_SIDE };

/* Writes a fake Fashion-MNIST set into dir; damage spoils the train files. */
static void write_fake_fmnist(const char *dir, enum damage damage)
{
    mkdir(dir, 0755);
    static const char *const names[4] = {"train-images-idx3-ubyte.gz",
                                         "train-labels-idx1-ubyte.gz",
                                         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
    for (int s = 0; s < 2; s++) {
        uint32_t n = s ? FAKE_TEST : FAKE_TRAIN;
        unsigned char *img = malloc(n * 784), lab[FAKE_TRAIN];
        for (uint32_t k = 0; k < n; k++) {
            for (int i = 0; i < 784; i++)
                img[k * 784 + i] = fake_pixel(s, (int)k, i);
            lab[k] = (unsigned char)fake_label(s, (int)k);
        }
        int spoil = s == 0 ? (int)damage : INTACT;
        if (spoil == BAD_LABEL)
            lab[5] = 10;
        uint32_t rows = spoil == BAD_SIDE ? 27 : 28;
        uint32_t dims3[3] = {n, rows, 28}, dims1[1] = {n};
        write_idx(dir, names[2 * s], spoil == BAD_MAGIC ? 0x804 : 0x803, dims3, 3, img,
                  n * rows * 28);
        write_idx(dir, names[2 * s + 1], 0x801, dims1, 1, lab, n);
        free(img);
    }
}

static void test_fashion_mnist_fake(void **state)
{
    (void)state;
    const char *idx = path_in_tmp("idx");
    write_fake_fmnist(idx, INTACT);
    setenv("MLBENCH_FASHION_MNIST_DIR", idx, 1);
    struct dataset_spec s = {.source = DATASET_FASHION_MNIST, .dir = path_in_tmp("fm")};
    struct dataset d;
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 1);
    assert_string_equal(d.source, "fashion-mnist");
    assert_int_equal(d.width, 28);
    assert_int_equal(d.channels, 1);
    assert_string_equal(d.class_names[0], "0-tshirt-top");
    assert_string_equal(d.class_names[9], "9-ankle-boot");
    assert_int_equal(d.train.count, FAKE_TRAIN);
    assert_int_equal(d.val.count, FAKE_TEST);
    struct jpeg *j = jpeg_new();
    unsigned char px[784], want[784];
    const struct dataset_split *sp[2] = {&d.train, &d.val};
    for (int split = 0; split < 2; split++)
        for (int i = 0; i < sp[split]->count; i++) {
            const char *p = sp[split]->paths[i];
            int label = sp[split]->labels[i];
            const char *slash = strrchr(p, '/');
            int n = atoi(slash + 1);
            assert_int_equal(strlen(slash + 1), strlen("00000.jpg"));
            assert_int_equal(label, fake_label(split, n));
            char tail[128];
            snprintf(tail, sizeof tail, "/%s/%s/%05d.jpg", split ? "val" : "train",
                     d.class_names[label], n);
            assert_non_null(strstr(p, tail));
            if (i > 0 && sp[split]->labels[i - 1] == label)
                assert_true(strcmp(sp[split]->paths[i - 1], p) < 0);
            size_t len;
            unsigned char *data = read_all(p, &len);
            assert_int_equal(jpeg_decode(j, data, len, 28, 28, 1, px), 0);
            free(data);
            for (int k = 0; k < 784; k++)
                want[k] = fake_pixel(split, n, k);
            assert_true(mean_abs_diff(px, want, 784) < 2.0);
        }
    jpeg_free(j);
    dataset_free(&d);

    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 0);
    dataset_free(&d);

    /* new IDX files (another mtime): redone */
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    assert_int_equal(utimensat(AT_FDCWD, path_in_tmp("idx/t10k-labels-idx1-ubyte.gz"), ts, 0), 0);
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 1);
    dataset_free(&d);

    /* without the IDX files, the prepared copy is still reused */
    setenv("MLBENCH_FASHION_MNIST_DIR", path_in_tmp("nowhere"), 1);
    open_ok(&s, &d);
    assert_int_equal(d.prepared_now, 0);
    dataset_free(&d);
    unsetenv("MLBENCH_FASHION_MNIST_DIR");
}

/* Prepares fashion-mnist from the IDX files in tmp/<idx> into tmp/<data>: it must fail as a
 * bad input, leave no dataset behind, and say msg. */
static void fmnist_fails(const char *idx, const char *data, const char *msg)
{
    struct dataset d;
    char err[1024];
    setenv("MLBENCH_FASHION_MNIST_DIR", path_in_tmp("%s", idx), 1);
    struct dataset_spec s = {.source = DATASET_FASHION_MNIST, .dir = path_in_tmp("%s", data)};
    assert_int_equal(dataset_open(&s, &d, err, sizeof err), DATASET_BAD_INPUT);
    if (!strstr(err, msg))
        fail_msg("'%s' does not say '%s'", err, msg);
    assert_false(exists(path_in_tmp("%s/train", data)));
    assert_false(exists(path_in_tmp("%s/MANIFEST", data)));
    unsetenv("MLBENCH_FASHION_MNIST_DIR");
}

static void test_fashion_mnist_errors(void **state)
{
    (void)state;
    /* missing: nothing is created */
    fmnist_fails("nowhere", "fm-missing", "train-images-idx3-ubyte.gz");
    fmnist_fails("nowhere", "fm-missing",
                 "install the Debian package dataset-fashion-mnist or set "
                 "MLBENCH_FASHION_MNIST_DIR");
    assert_false(exists(path_in_tmp("fm-missing")));

    write_fake_fmnist(path_in_tmp("idx-magic"), BAD_MAGIC);
    fmnist_fails("idx-magic", "fm-magic", "magic number 0x00000804, expected 0x00000803");
    write_fake_fmnist(path_in_tmp("idx-label"), BAD_LABEL);
    fmnist_fails("idx-label", "fm-label", "label 10 of image 5");
    write_fake_fmnist(path_in_tmp("idx-side"), BAD_SIDE);
    fmnist_fails("idx-side", "fm-side", "27x28 images, expected 28x28");

    /* a gzip stream cut short */
    write_fake_fmnist(path_in_tmp("idx-cut"), INTACT);
    assert_int_equal(truncate(path_in_tmp("idx-cut/t10k-images-idx3-ubyte.gz"), 100), 0);
    fmnist_fails("idx-cut", "fm-cut", "t10k-images-idx3-ubyte.gz' is");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jpeg_roundtrip_grey),
        cmocka_unit_test(test_jpeg_roundtrip_rgb),
        cmocka_unit_test(test_jpeg_corrupt),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_default_dir),
        cmocka_unit_test(test_synthetic_layout_and_determinism),
        cmocka_unit_test(test_synthetic_reuse_and_redo),
        cmocka_unit_test(test_concurrent_prepare),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_fashion_mnist_fake),
        cmocka_unit_test(test_fashion_mnist_errors),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
