/* loader: the input pipeline of imgclf: reads the JPEG files of one epoch (`load`), decodes,
 * augments and normalises them into NHWC float batches (`preprocess`).
 *
 * threads = 0: everything happens in the caller's thread inside loader_next (the baseline).
 * threads = N: N loader threads split each batch into chunks; batch b's contents depend only on
 * (seed, epoch, b), never on the thread count or timing. prefetch = K: the threads may prepare
 * up to K batches ahead of the one the caller holds, overlapping input with training (K = 0:
 * they start on a batch only when the caller asks for it).
 *
 * With marks set, each chunk's reading and decoding are marked as the stages `load` and
 * `preprocess` on the thread that does them, so the harness shows how much of the input work
 * overlapped training. A file that cannot be read or decoded is skipped and counted, never a
 * crash; the batch is then shorter. */
#ifndef MLBENCH_WL_LOADER_H
#define MLBENCH_WL_LOADER_H

#include <stdint.h>

#include "imgclf/data/dataset.h"
#include "imgclf/preprocess.h"

struct loader_config {
    const struct dataset_split *split;
    int width, height, channels;
    int batch;           /* images per batch (the last one may be shorter) */
    int threads;         /* 0: serial in the caller */
    int prefetch;        /* batches prepared ahead (with threads >= 1) */
    int shuffle;         /* visit the images in a seeded random order per epoch */
    struct augment aug;  /* all zero: centre crop, no flip (evaluation) */
    uint64_t seed;
    int marks;           /* emit load / preprocess stage markers */
    /* Data-parallel shards (imgclf --ranks): with shards >= 2 the epoch's global batches hold
     * batch x shards images, and this loader gives shard `shard`'s even slice of each (batch
     * images; the last global batch's slice may be shorter, or empty). Every shard sees the
     * same number of batches, and each image is augmented as in the global batch's position,
     * so the shards together see exactly what one loader of the global batch would. */
    int shard, shards;
};

struct batch {
    float *x;      /* n images, NHWC */
    int *labels;   /* n labels */
    int n;
    int skipped;   /* unreadable or corrupt files left out of this batch */
};

struct loader;

/* Starts epoch `epoch` (threads begin preparing at once when prefetch > 0). NULL with a message
 * in err if memory or threads run out (errno ENOMEM when memory did). */
struct loader *loader_start(const struct loader_config *cfg, int epoch, char *err, size_t errlen);
/* The next batch, in order; NULL at the end of the epoch. The batch stays valid until the next
 * call of loader_next or loader_free. */
const struct batch *loader_next(struct loader *l);
/* Bytes loader_start allocates for cfg: its batch slots (prefetch + 1 with threads, else 1,
 * each batch x (the NHWC floats, a label, a flag)), each worker's decode buffer and file table,
 * and the visiting order. The JPEG files' bytes, read a chunk at a time, are not counted (they
 * depend on the files). Linear in the batch. */
double loader_memory_bytes(const struct loader_config *cfg);
/* Number of batches in the epoch. */
int loader_batches(const struct loader *l);
/* Files skipped so far, and the path and reason of the first one (NULL when none). */
long loader_skipped(const struct loader *l, const char **first_path, const char **first_reason);
/* Stops the threads and frees everything; safe at any point of the epoch. */
void loader_free(struct loader *l);

#endif
