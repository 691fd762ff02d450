/* makeclass: a data generator with the semantics of scikit-learn's make_classification (two
 * classes, two Gaussian clusters per class at distinct vertices of a hypercube of side
 * 2 * class_sep in the informative subspace, each cluster given a random covariance; redundant
 * features are random linear combinations of the informative ones, the rest is N(0, 1) noise;
 * a fraction of labels is replaced by random ones; samples and features are shuffled), followed
 * by a shuffled train/test split (docs/logreg.md). fp32, deterministic for a seed, and the same
 * whatever the thread count: every sample has its own random stream and the covariance products
 * run on fixed blocks of rows. */
#ifndef MLBENCH_WL_MAKECLASS_H
#define MLBENCH_WL_MAKECLASS_H

#include <stddef.h>
#include <stdint.h>

struct pool;

/* Largest --informative: the four covariance matrices hold 4 x informative^2 floats. */
#define MAKECLASS_MAX_INFORMATIVE 4096
/* The two classes with two clusters each need 4 distinct hypercube vertices. */
#define MAKECLASS_CLUSTERS 4

struct makeclass_spec {
    long samples;         /* before the split */
    long features;        /* informative + redundant + noise */
    long informative;
    long redundant;
    double class_sep;     /* half the side of the hypercube */
    double flip_y;        /* fraction of labels drawn at random (about half of them change) */
    double test_fraction; /* test rows = ceil(test_fraction * samples), as train_test_split */
    uint64_t seed;
};

struct makeclass_data {
    long n_train, n_test, features;
    float *X_train, *X_test; /* row-major, n x features */
    float *y_train, *y_test; /* labels, 0 or 1 */
    /* features entries: the column of the unshuffled layout each column holds: [0, informative)
     * informative, [informative, informative + redundant) redundant, the rest noise. */
    int *column_source;
};

/* Checks a spec the way make_classification and train_test_split do (informative + redundant
 * <= features; 4 clusters need 2^informative >= 4; both parts of the split non-empty). Returns
 * 0, or -1 with a message naming the values and what to do in err. */
int makeclass_check(const struct makeclass_spec *spec, char *err, size_t errlen);

/* Generates the data of spec into *data (caller frees it with makeclass_free) on the workers
 * of pool (the result does not depend on their number). Sets OpenBLAS to one thread for the
 * duration (the blocks run in parallel themselves) and restores it. Returns 0, or -1 with a
 * message in err (bad spec, out of memory); *data is then empty. Not thread-safe (OpenBLAS's
 * thread setting is global). */
int makeclass_generate(const struct makeclass_spec *spec, struct pool *pool,
                       struct makeclass_data *data, char *err, size_t errlen);

/* Frees what makeclass_generate allocated and zeroes *data; an empty *data is allowed. */
void makeclass_free(struct makeclass_data *data);

#endif
