/* train: imgclf's training loop (docs/workloads.md): the epochs of SGD steps with the learning-rate
 * schedule, the evaluations on val on their schedule (--eval-every), the time to the target
 * accuracy, the stop at --until-accuracy, and the run's summary. imgclf.c parses the options,
 * builds the model and the loaders' configurations and calls train_run. */
#ifndef MLBENCH_WL_IMGCLF_TRAIN_H
#define MLBENCH_WL_IMGCLF_TRAIN_H

#include "common/cuda_backend.h"
#include "imgclf/cnn.h"
#include "imgclf/dist.h"
#include "imgclf/loader.h"

/* The model being trained: the CPU backend, or the CUDA one (started from the CPU net's
 * weights, so that both start alike for a seed). */
struct model {
    struct cnn *cpu;
    const struct cuda_backend *cuda;
    struct cuda_cnn *gpu;
};

/* What the loop needs to know of the options. */
struct train_config {
    const struct loader_config *train; /* the training loader of every epoch */
    const struct loader_config *eval;  /* the loader of an evaluation (val, no augmentation) */
    int epochs;        /* a fixed run's epochs (--epochs); with until: the most (--max-epochs) */
    int until;         /* stop at the first evaluation at or above target (--until-accuracy) */
    double target;     /* --until-accuracy, else --target-accuracy */
    long eval_every;   /* evaluate every this many steps; 0: at the end of each epoch */
    double lr, momentum, weight_decay; /* peak learning rate; SGD */
    int cosine;        /* cosine decay over `epochs` epochs of steps, else constant */
    int input_only;    /* load and preprocess only: no step, no evaluation */
    int quiet;         /* no line per evaluation */
    /* Data-parallel over MPI ranks (--ranks), or NULL: the loaders give this rank's shard of
     * each global batch; a step is the stages train (forward and backward on the shard),
     * barrier (waiting for the slowest rank), allreduce (the gradients summed over the ranks)
     * and update (SGD); evaluations sum the shards' counts. Counters come from rank 0 only,
     * with the global figures. */
    const struct dist *dist;
    int check_replicas; /* with dist: compare the weights of all ranks after every step */
};

/* What a run has measured so far, for the summary. */
struct run_totals {
    long images, skipped, val_skipped, step;
    double train_s;    /* inside the "train" stages */
    double reached_s;  /* when val accuracy first reached the target; -1: not yet */
    long reached_step; /* the steps trained by then */
    double reached_epochs; /* the images trained by then / the training set's size */
    int reached_epoch; /* the (1-based) epoch of that evaluation */
    double acc, loss;  /* the last val accuracy (-1: none); the last epoch's mean train loss */
    double best_acc;   /* the best val accuracy (-1: none), its epoch (1-based) and step */
    int best_epoch;
    long best_step;
    double epochs_run; /* images trained / the training set's size (partial epochs count) */
    /* With dist: seconds of rank 0 in each part of the steps, and the allreduces' bytes */
    double barrier_s, allreduce_s, update_s, compute_s;
    double allreduce_bytes;
};

/* Runs the epochs with their evaluations, filling all of *t; t0 is the start of the clock of
 * time_to_target_s (wl_now). Returns 0; 1 (message printed) when the model failed, the loss
 * diverged or the data could not be read; WL_EXIT_OOM when memory ran out;
 * WL_EXIT_TARGET_MISSED when c->until and c->epochs passed without reaching c->target (message
 * printed). Not thread-safe: one run at a time. */
int train_run(struct model *net, const struct train_config *c, double t0, struct run_totals *t);

/* The run's counters and summary line (status 0 or WL_EXIT_TARGET_MISSED: what was measured
 * holds either way), and the skipped images (any status). total_s: the run's wall time;
 * flops_step: training FLOPs per image (cnn_flops_train). */
void train_summarise(const struct train_config *c, const struct run_totals *t, int status,
                     double total_s, double flops_step);

#endif
