/* batcher: the queue of requests and the batcher thread of serve (see batcher.h).
 *
 * One mutex guards the queue and every queued request's state. A request lives on the stack of
 * the thread in batcher_run, which waits on the request's own condition variable until the
 * batcher marks it done (under the mutex): the batcher never touches a request after that, and
 * batcher_run returns only after it, so a request is never used after its memory is gone,
 * whatever happened to the client's connection meanwhile. */
#include "serve/batcher.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/opts.h"
#include "mlbench/marker.h"

struct item {
    struct item *next;
    int n;
    const float *x;
    float *prob;
    double queued_s; /* wl_now() when queued */
    int done;
    pthread_cond_t cond;
};

struct batcher {
    struct batcher_config c;
    size_t image_floats, classes;
    float *x, *prob; /* one batch's images and probabilities (max_batch of each) */
    struct item **taken; /* the batch's requests */
    pthread_t thread;
    int started;         /* the mutex, the condition and the thread exist */
    pthread_mutex_t mu;
    pthread_cond_t more; /* a request was queued (signalled when the batcher may care) */
    struct item *head, *tail;
    int queued_images;
    int stopping;
    struct batcher_totals totals;
};

/* Waits on cond until the CLOCK_MONOTONIC time deadline_s (the condition uses that clock). */
static void wait_until(pthread_cond_t *cond, pthread_mutex_t *mu, double deadline_s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)deadline_s;
    ts.tv_nsec = (long)((deadline_s - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cond, mu, &ts);
}

/* Takes the requests of the next batch off the queue into b->taken (called locked): as many as
 * fit in max_batch images, in order. The count; *images gets their images. */
static int take_batch(struct batcher *b, int *images)
{
    int count = 0, total = 0;
    while (b->head && total + b->head->n <= b->c.max_batch) {
        struct item *it = b->head;
        b->head = it->next;
        total += it->n;
        b->taken[count++] = it;
    }
    if (!b->head)
        b->tail = NULL;
    b->queued_images -= total;
    *images = total;
    return count;
}

/* Runs one batch of count requests, images in all, unlocked. */
static void run_batch(struct batcher *b, int count, int images)
{
    const double start = wl_now();
    double wait_s = 0;
    mlb_stage_begin("batch");
    /* One request: its own buffers, no copy. */
    const float *x = count == 1 ? b->taken[0]->x : b->x;
    float *prob = count == 1 ? b->taken[0]->prob : b->prob;
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        const struct item *it = b->taken[i];
        wait_s += start - it->queued_s;
        if (count > 1)
            memcpy(b->x + at * b->image_floats, it->x, (size_t)it->n * b->image_floats *
                   sizeof *b->x);
        at += (size_t)it->n;
    }
    mlb_stage_begin("compute");
    cnn_predict_proba(b->c.net, x, images, prob, NULL);
    mlb_stage_end("compute");
    at = 0;
    for (int i = 0; count > 1 && i < count; i++) {
        struct item *it = b->taken[i];
        memcpy(it->prob, b->prob + at * b->classes, (size_t)it->n * b->classes * sizeof *prob);
        at += (size_t)it->n;
    }
    mlb_counter("batch_size", images);
    mlb_counter("requests", count);
    mlb_counter("queue_wait_seconds", wait_s / count);
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < count; i++) {
        b->taken[i]->done = 1;
        pthread_cond_signal(&b->taken[i]->cond);
    }
    b->totals.requests += count;
    b->totals.images += images;
    b->totals.batches++;
    b->totals.queue_wait_s += wait_s;
    pthread_mutex_unlock(&b->mu);
    mlb_stage_end("batch");
}

static void *batcher_main(void *arg)
{
    struct batcher *b = arg;
    const double delay_s = (double)b->c.max_queue_delay_us * 1e-6;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->head && !b->stopping)
            pthread_cond_wait(&b->more, &b->mu);
        if (!b->head)
            break; /* stopping, and nothing is left */
        /* The oldest request waits at most delay_s for others to fill the batch: from its
         * arrival, so that time spent computing the previous batch counts. */
        const double deadline = b->head->queued_s + delay_s;
        while (!b->stopping && b->queued_images < b->c.max_batch && wl_now() < deadline)
            wait_until(&b->more, &b->mu, deadline);
        int images;
        int count = take_batch(b, &images);
        pthread_mutex_unlock(&b->mu);
        run_batch(b, count, images);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

struct batcher *batcher_start(const struct batcher_config *c, char *err, size_t errlen)
{
    struct batcher *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "cannot allocate the batcher");
        return NULL;
    }
    const struct cnn_shape s = cnn_shape_of(c->net);
    b->c = *c;
    b->image_floats = (size_t)s.height * s.width * s.channels;
    b->classes = (size_t)s.classes;
    b->x = malloc((size_t)c->max_batch * b->image_floats * sizeof *b->x);
    b->prob = malloc((size_t)c->max_batch * b->classes * sizeof *b->prob);
    b->taken = malloc((size_t)c->max_batch * sizeof *b->taken);
    if (!b->x || !b->prob || !b->taken) {
        snprintf(err, errlen, "cannot allocate the buffers of a batch of %d images",
                 c->max_batch);
        batcher_free(b);
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* wl_now's clock */
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->more, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&b->thread, NULL, batcher_main, b);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the batcher thread: %s", strerror(rc));
        pthread_cond_destroy(&b->more);
        pthread_mutex_destroy(&b->mu);
        batcher_free(b);
        return NULL;
    }
    b->started = 1;
    return b;
}

int batcher_run(struct batcher *b, int n, const float *x, float *prob)
{
    struct item it = {.n = n, .x = x, .prob = prob};
    pthread_cond_init(&it.cond, NULL);
    pthread_mutex_lock(&b->mu);
    if (b->stopping) {
        pthread_mutex_unlock(&b->mu);
        pthread_cond_destroy(&it.cond);
        return -1;
    }
    it.queued_s = wl_now();
    if (b->tail)
        b->tail->next = &it;
    else
        b->head = &it;
    b->tail = &it;
    /* The batcher sleeps either for a first request or for a full batch. */
    int was_empty = b->queued_images == 0;
    b->queued_images += n;
    if (was_empty || b->queued_images >= b->c.max_batch)
        pthread_cond_signal(&b->more);
    while (!it.done)
        pthread_cond_wait(&it.cond, &b->mu);
    pthread_mutex_unlock(&b->mu);
    pthread_cond_destroy(&it.cond);
    return 0;
}

void batcher_stop(struct batcher *b)
{
    pthread_mutex_lock(&b->mu);
    b->stopping = 1;
    pthread_cond_signal(&b->more);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
}

struct batcher_totals batcher_totals(struct batcher *b)
{
    pthread_mutex_lock(&b->mu);
    struct batcher_totals t = b->totals;
    pthread_mutex_unlock(&b->mu);
    return t;
}

void batcher_free(struct batcher *b)
{
    if (!b)
        return;
    if (b->started) { /* the thread was joined by batcher_stop */
        pthread_cond_destroy(&b->more);
        pthread_mutex_destroy(&b->mu);
    }
    free(b->x);
    free(b->prob);
    free(b->taken);
    free(b);
}
