/* loader: the input pipeline of imgclf, serial or with loader threads and prefetch (loader.h).
 *
 * Work is handed out as (batch, chunk) items in order; batch b lives in slot b % nslots, and a
 * thread may start an item of batch b only when b is inside the window the caller allows:
 * b <= released + prefetch + 1 with prefetch >= 1 (released = the last batch the caller gave
 * back), or b == the batch the caller waits for with prefetch 0. */
#include "imgclf/loader.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "imgclf/data/jpeg.h"
#include "mlbench/marker.h"

struct slot {
    struct batch b;
    unsigned char *valid; /* per image of the batch */
    int done;             /* chunks finished */
};

/* What one thread needs to read and decode: its own TurboJPEG handle and buffers. */
struct worker {
    struct loader *l;
    struct jpeg *jpeg;
    unsigned char *pixels;  /* one decoded image */
    unsigned char **files;  /* chunk file contents */
    size_t *file_len;
    int *file_ok;
    char reason[160];
};

struct loader {
    struct loader_config cfg;
    int epoch;
    int n_images, n_batches;
    int *order; /* epoch's visiting order: indexes into split */
    int *gpos;  /* with shards: each order entry's position in the global epoch, else NULL */
    size_t image_floats;
    int chunk, chunks_per_batch;
    int nslots;
    struct slot *slots;
    struct worker *workers; /* threads, or one for the serial mode */
    int n_workers;
    pthread_t *threads;
    int threads_started;

    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    long next_item;
    int held;      /* batch the caller holds, -1 none */
    int released;  /* last batch given back */
    int wanted;    /* batch the caller waits for, -1 none */
    int next_out;
    int stop;
    long skipped;
    char *first_skip_path;
    char first_skip_reason[160];
};

static int batch_size_of(const struct loader *l, int b)
{
    int left = l->n_images - b * l->cfg.batch;
    return left < l->cfg.batch ? left : l->cfg.batch;
}

static void record_skip(struct loader *l, const char *path, const char *reason)
{
    /* Called with mu held, or in the serial mode where no thread runs. */
    if (l->skipped++ == 0) {
        l->first_skip_path = strdup(path);
        snprintf(l->first_skip_reason, sizeof l->first_skip_reason, "%s", reason);
    }
}

/* Reads and decodes images [first, first + count) of batch b into its slot. */
static void process_chunk(struct worker *w, int b, int first, int count)
{
    struct loader *l = w->l;
    const struct loader_config *cfg = &l->cfg;
    struct slot *s = &l->slots[l->cfg.threads ? b % l->nslots : 0];
    int base = b * cfg->batch;

    if (cfg->marks)
        mlb_stage_begin("load");
    for (int i = 0; i < count; i++) {
        const char *path = cfg->split->paths[l->order[base + first + i]];
        free(w->files[i]);
        w->files[i] = NULL;
        w->file_ok[i] = dataset_read_file(path, &w->files[i], &w->file_len[i]) == 0;
        if (!w->file_ok[i])
            snprintf(w->reason, sizeof w->reason, "%s", strerror(errno));
    }
    if (cfg->marks) {
        mlb_stage_end("load");
        mlb_stage_begin("preprocess");
    }
    struct norm norm = preprocess_norm(cfg->channels);
    uint64_t epoch_seed = rng_derive(cfg->seed, (uint64_t)l->epoch);
    for (int i = 0; i < count; i++) {
        int pos = first + i;
        int item = l->order[base + pos];
        const char *reason = NULL;
        if (!w->file_ok[i])
            reason = "cannot read";
        else if (jpeg_decode(w->jpeg, w->files[i], w->file_len[i], cfg->width, cfg->height,
                             cfg->channels, w->pixels) != 0)
            reason = jpeg_error(w->jpeg);
        s->valid[pos] = reason == NULL;
        if (reason) {
            if (cfg->threads)
                pthread_mutex_lock(&l->mu);
            record_skip(l, cfg->split->paths[item], reason);
            if (cfg->threads)
                pthread_mutex_unlock(&l->mu);
            continue;
        }
        struct rng r;
        rng_seed(&r, rng_derive(epoch_seed, (uint64_t)(l->gpos ? l->gpos[base + pos]
                                                               : base + pos)));
        preprocess_augment(w->pixels, cfg->width, cfg->height, cfg->channels, &cfg->aug, &r,
                           &norm, s->b.x + (size_t)pos * l->image_floats);
        s->b.labels[pos] = cfg->split->labels[item];
    }
    if (cfg->marks)
        mlb_stage_end("preprocess");
}

/* Moves the valid images of a finished batch to the front. */
static void compact(struct loader *l, struct slot *s, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!s->valid[i])
            continue;
        if (k != i) {
            memcpy(s->b.x + (size_t)k * l->image_floats, s->b.x + (size_t)i * l->image_floats,
                   l->image_floats * sizeof(float));
            s->b.labels[k] = s->b.labels[i];
        }
        k++;
    }
    s->b.n = k;
    s->b.skipped = n - k;
}

static int allowed(const struct loader *l, int b)
{
    if (l->cfg.prefetch > 0)
        return b <= l->released + l->cfg.prefetch + 1;
    return b == l->wanted;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct loader *l = w->l;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        if (l->stop)
            break;
        int b = (int)(l->next_item / l->chunks_per_batch);
        int c = (int)(l->next_item % l->chunks_per_batch);
        if (b >= l->n_batches)
            break;
        if (!allowed(l, b)) {
            pthread_cond_wait(&l->work_cv, &l->mu);
            continue;
        }
        l->next_item++;
        pthread_mutex_unlock(&l->mu);
        int n = batch_size_of(l, b), first = c * l->chunk;
        int count = first >= n ? 0 : (n - first < l->chunk ? n - first : l->chunk);
        if (count > 0)
            process_chunk(w, b, first, count);
        pthread_mutex_lock(&l->mu);
        if (++l->slots[b % l->nslots].done == l->chunks_per_batch)
            pthread_cond_broadcast(&l->done_cv);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

static int worker_init(struct worker *w, struct loader *l)
{
    w->l = l;
    w->jpeg = jpeg_new();
    w->pixels = malloc((size_t)l->cfg.width * l->cfg.height * l->cfg.channels);
    w->files = calloc((size_t)l->chunk, sizeof *w->files);
    w->file_len = calloc((size_t)l->chunk, sizeof *w->file_len);
    w->file_ok = calloc((size_t)l->chunk, sizeof *w->file_ok);
    return w->jpeg && w->pixels && w->files && w->file_len && w->file_ok ? 0 : -1;
}

static void worker_free(struct worker *w, int chunk)
{
    if (w->files)
        for (int i = 0; i < chunk; i++)
            free(w->files[i]);
    free(w->files);
    free(w->file_len);
    free(w->file_ok);
    free(w->pixels);
    jpeg_free(w->jpeg);
}

/* The epoch's order: identity, or a Fisher-Yates shuffle seeded by (seed, epoch). */
static void make_order(int *order, int n, int shuffle, uint64_t seed, int epoch)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (!shuffle)
        return;
    struct rng r;
    rng_seed(&r, rng_derive(seed ^ 0x5eed0f0c0ffeeULL, (uint64_t)epoch));
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&r, (uint32_t)i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Keeps of the epoch's order only this shard's slice of each global batch (batch x shards
 * images), in place, and the global positions of those kept. 0, or -1 out of memory. */
static int shard_order(struct loader *l)
{
    const struct loader_config *cfg = &l->cfg;
    long global = (long)cfg->batch * cfg->shards, n = l->n_images, kept = 0;
    l->gpos = malloc((size_t)(n > 0 ? n : 1) * sizeof *l->gpos);
    if (!l->gpos)
        return -1;
    for (long start = 0; start < n; start += global) {
        long len = n - start < global ? n - start : global;
        long lo = len * cfg->shard / cfg->shards, hi = len * (cfg->shard + 1) / cfg->shards;
        for (long i = start + lo; i < start + hi; i++) { /* kept <= i: in place is safe */
            l->order[kept] = l->order[i];
            l->gpos[kept++] = (int)i;
        }
    }
    l->n_batches = (int)((n + global - 1) / global);
    l->n_images = (int)kept;
    return 0;
}

/* The workers (returned), images per chunk and batch slots of cfg. Chunks: a batch split
 * evenly over the threads, at most 32 images each, so that every thread has work in each batch
 * and a chunk's files fit the caches. */
static int geometry(const struct loader_config *cfg, int *chunk, int *nslots)
{
    int t = cfg->threads > 0 ? cfg->threads : 1;
    *chunk = cfg->threads > 0 ? (cfg->batch + t - 1) / t : cfg->batch;
    if (cfg->threads > 0 && *chunk > 32)
        *chunk = 32;
    *nslots = cfg->threads > 0 ? cfg->prefetch + 1 : 1;
    return t;
}

double loader_memory_bytes(const struct loader_config *cfg)
{
    int chunk, nslots, t = geometry(cfg, &chunk, &nslots);
    double image = (double)cfg->width * cfg->height * cfg->channels;
    double slot = (double)cfg->batch * (image * sizeof(float) + sizeof(int) + 1);
    double worker = image + (double)chunk * (sizeof(unsigned char *) + sizeof(size_t) +
                                             sizeof(int));
    return nslots * slot + t * worker + (double)cfg->split->count * sizeof(int) +
           sizeof(struct loader) + (double)t * sizeof(struct worker);
}

struct loader *loader_start(const struct loader_config *cfg, int epoch, char *err, size_t errlen)
{
    struct loader *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "cannot allocate the loader");
        errno = ENOMEM;
        return NULL;
    }
    l->cfg = *cfg;
    l->epoch = epoch;
    l->n_images = cfg->split->count;
    l->n_batches = (l->n_images + cfg->batch - 1) / cfg->batch;
    l->image_floats = (size_t)cfg->width * cfg->height * cfg->channels;
    int t = geometry(cfg, &l->chunk, &l->nslots);
    l->chunks_per_batch = (cfg->batch + l->chunk - 1) / l->chunk;
    l->held = l->released = l->wanted = -1;
    l->order = malloc((size_t)(l->n_images > 0 ? l->n_images : 1) * sizeof *l->order);
    l->slots = calloc((size_t)l->nslots, sizeof *l->slots);
    l->n_workers = t;
    l->workers = calloc((size_t)t, sizeof *l->workers);
    l->threads = calloc((size_t)t, sizeof *l->threads);
    int ok = l->order && l->slots && l->workers && l->threads;
    for (int i = 0; ok && i < l->nslots; i++) {
        struct slot *s = &l->slots[i];
        s->b.x = malloc((size_t)cfg->batch * l->image_floats * sizeof(float));
        s->b.labels = malloc((size_t)cfg->batch * sizeof(int));
        s->valid = malloc((size_t)cfg->batch);
        ok = s->b.x && s->b.labels && s->valid;
    }
    for (int i = 0; ok && i < t; i++)
        ok = worker_init(&l->workers[i], l) == 0;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work_cv, NULL);
    pthread_cond_init(&l->done_cv, NULL);
    if (!ok) {
        snprintf(err, errlen, "cannot allocate %d slot(s) of %d images of %dx%dx%d",
                 l->nslots, cfg->batch, cfg->width, cfg->height, cfg->channels);
        loader_free(l);
        errno = ENOMEM;
        return NULL;
    }
    make_order(l->order, l->n_images, cfg->shuffle, cfg->seed, epoch);
    if (cfg->shards > 1 && shard_order(l) != 0) {
        snprintf(err, errlen, "cannot allocate the shard's order of %d images", l->n_images);
        loader_free(l);
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; cfg->threads > 0 && i < t; i++) {
        int rc = pthread_create(&l->threads[i], NULL, worker_main, &l->workers[i]);
        if (rc) {
            snprintf(err, errlen, "cannot start loader thread %d: %s", i + 1, strerror(rc));
            loader_free(l);
            return NULL;
        }
        l->threads_started++;
    }
    return l;
}

const struct batch *loader_next(struct loader *l)
{
    if (l->cfg.threads == 0) {
        if (l->next_out >= l->n_batches)
            return NULL;
        int b = l->next_out++, n = batch_size_of(l, b);
        process_chunk(&l->workers[0], b, 0, n);
        compact(l, &l->slots[0], n);
        return &l->slots[0].b;
    }
    pthread_mutex_lock(&l->mu);
    if (l->held >= 0) {
        l->slots[l->held % l->nslots].done = 0;
        l->released = l->held;
        l->held = -1;
    }
    if (l->next_out >= l->n_batches) {
        pthread_mutex_unlock(&l->mu);
        return NULL;
    }
    int b = l->next_out;
    struct slot *s = &l->slots[b % l->nslots];
    l->wanted = b;
    pthread_cond_broadcast(&l->work_cv);
    while (s->done < l->chunks_per_batch)
        pthread_cond_wait(&l->done_cv, &l->mu);
    l->wanted = -1;
    l->held = b;
    l->next_out++;
    pthread_mutex_unlock(&l->mu);
    compact(l, s, batch_size_of(l, b));
    return &s->b;
}

int loader_batches(const struct loader *l)
{
    return l->n_batches;
}

long loader_skipped(const struct loader *l, const char **first_path, const char **first_reason)
{
    if (first_path)
        *first_path = l->first_skip_path;
    if (first_reason)
        *first_reason = l->skipped ? l->first_skip_reason : NULL;
    return l->skipped;
}

void loader_free(struct loader *l)
{
    if (!l)
        return;
    if (l->threads_started) {
        pthread_mutex_lock(&l->mu);
        l->stop = 1;
        pthread_cond_broadcast(&l->work_cv);
        pthread_mutex_unlock(&l->mu);
        for (int i = 0; i < l->threads_started; i++)
            pthread_join(l->threads[i], NULL);
    }
    pthread_cond_destroy(&l->work_cv);
    pthread_cond_destroy(&l->done_cv);
    pthread_mutex_destroy(&l->mu);
    for (int i = 0; l->workers && i < l->n_workers; i++)
        worker_free(&l->workers[i], l->chunk);
    for (int i = 0; l->slots && i < l->nslots; i++) {
        free(l->slots[i].b.x);
        free(l->slots[i].b.labels);
        free(l->slots[i].valid);
    }
    free(l->slots);
    free(l->workers);
    free(l->threads);
    free(l->order);
    free(l->gpos);
    free(l->first_skip_path);
    free(l);
}
