/* batcher: serve's dynamic batching (docs/workloads.md, "serve"). The HTTP threads hand their
 * parsed requests to batcher_run, which queues them and waits; one batcher thread takes up to
 * max_batch queued images (a request of N images counts N; requests are taken in arrival order
 * and never split), waiting at most max_queue_delay_us after the oldest one's arrival for the
 * batch to fill, runs one forward pass of the CNN on them, writes each request's probabilities
 * and wakes it. Markers (on the batcher thread): stage "batch" per batch with counters
 * "batch_size" (images), "requests" and "queue_wait_seconds" (the batch's requests' mean time
 * from queueing to the batch's start), and stage "compute" around the forward pass. */
#ifndef MLBENCH_WL_SERVE_BATCHER_H
#define MLBENCH_WL_SERVE_BATCHER_H

#include "imgclf/cnn.h"

struct batcher_config {
    struct cnn *net;         /* used only by the batcher thread until batcher_stop returns */
    int max_batch;           /* images per forward pass, >= 1 */
    long max_queue_delay_us; /* >= 0 */
};

/* What the batcher has done so far. */
struct batcher_totals {
    long requests, images, batches;
    double queue_wait_s; /* the sum over requests */
};

struct batcher;

/* Starts the batcher thread. NULL with a message in err when its buffers cannot be allocated
 * or the thread cannot start. */
struct batcher *batcher_start(const struct batcher_config *c, char *err, size_t errlen);

/* Queues the request of n images x (1 <= n <= max_batch, the CNN's NHWC layout; read until the
 * call returns) and blocks until its batch has run: 0 with n x classes probabilities in prob,
 * or -1 with nothing written when the batcher is stopping. Thread-safe: any number of threads
 * call it at once. */
int batcher_run(struct batcher *b, int n, const float *x, float *prob);

/* Stops the batcher: every request already queued is still run and answered, later calls of
 * batcher_run return -1 at once; returns when the thread has ended. Call once, from one
 * thread. */
void batcher_stop(struct batcher *b);

/* The totals so far (thread-safe). */
struct batcher_totals batcher_totals(struct batcher *b);

/* Frees the batcher (after batcher_stop). NULL is fine. */
void batcher_free(struct batcher *b);

#endif
