/* sweep_plan: the pure parts of `mlbench sweep` (docs/sweep.md): parameters from -L and -P,
 * their product, {NAME} substitution in a command, the interleaved order of a round, the
 * doubling-then-bisection search of --find-max, and objectives and constraints evaluated on a
 * point's figures (struct doc_sweep_figures, doc/sweep.h: what the "figures" object of a point
 * of a "mlbench.sweep/1" document holds). No I/O; thread-safe. */
#ifndef MLBENCH_SWEEP_PLAN_H
#define MLBENCH_SWEEP_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doc/sweep.h"

#define SWEEP_MAX_POINTS 1000   /* points of one sweep: more is a typo (or a week of runs) */
#define SWEEP_MAX_PARAMS 16
#define SWEEP_MAX_NAME 64       /* characters of a parameter name */

struct sweep_param {
    char *name;
    char **values;   /* owned, n of them */
    size_t n;
    bool numeric;    /* every value is a finite number */
};

/* -L NAME V1,V2,...: the values split at commas. Returns 0, or -1 with a message naming the bad
 * name or value (a name that is not [A-Za-z_][A-Za-z0-9_]*, no values, an empty value, the same
 * value twice). */
int sweep_param_list(struct sweep_param *out, const char *name, const char *values, char *err,
                     size_t errlen);
/* -P NAME MIN MAX [-D STEP] (step NULL: 1), or with pow2 the powers of two in [MIN, MAX].
 * Numbers are written back without trailing zeros ("0.5", "16"). Returns 0, or -1 with a
 * message (not a number, MIN > MAX, a step <= 0, more than SWEEP_MAX_POINTS values, no power
 * of two in the range). */
int sweep_param_range(struct sweep_param *out, const char *name, const char *min,
                      const char *max, const char *step, bool pow2, char *err, size_t errlen);
void sweep_param_free(struct sweep_param *p);

/* The number of combinations of params (their product), or 0 when one has no values or the
 * product exceeds SWEEP_MAX_POINTS. */
size_t sweep_product_size(const struct sweep_param *params, size_t n);
/* Combination k (0-based, the last parameter varying fastest) as one value index per
 * parameter, into idx[n]. */
void sweep_combination(const struct sweep_param *params, size_t n, size_t k, size_t *idx);

/* s with every {NAME} of a parameter replaced by its value in combination idx, and {{NAME}}
 * written as a literal {NAME}. Other braces are left alone ("{\"a\": 1}", "{ print $1 }");
 * only {IDENT} that names no parameter is refused. used[j] is set for each parameter j seen
 * (may be NULL). Returns a new string, or NULL with a message naming the unknown {NAME} and
 * the parameters there are. what names s in messages ("the command", "--prepare"). */
char *sweep_substitute(const char *s, const char *what, const struct sweep_param *params,
                       size_t n, const size_t *idx, bool *used, char *err, size_t errlen);

/* A point's name from its combination: "batch=64 lr=0.1". New string. */
char *sweep_point_name(const struct sweep_param *params, size_t n, const size_t *idx);

/* order[0..n) := a shuffle of 0..n-1 (Fisher-Yates) drawn from *state, a splitmix64 state the
 * caller seeds once per sweep and passes to every round. */
void sweep_shuffle(size_t *order, size_t n, uint64_t *state);

/* --find-max: doubling from lo while the value fits, then bisection between the last value
 * that fitted and the first that did not (with pow2, over powers of two only). */
struct sweep_search {
    long long lo, hi;
    bool pow2;
    long long last_fit;   /* -1: none yet */
    long long first_fail; /* -1: none yet */
    long long next;       /* the value to probe next, -1 when the search is over */
};
/* Parses "NAME=LO..HI" (1 <= LO <= HI <= 2^40; with pow2, LO rounds up and HI down to powers
 * of two) into *s and the parameter's name into name[SWEEP_MAX_NAME + 1]. Returns 0, or -1
 * with a message. */
int sweep_search_parse(struct sweep_search *s, char *name, const char *spec, bool pow2,
                       char *err, size_t errlen);
/* Books the outcome of probing value (the search's next). */
void sweep_search_report(struct sweep_search *s, long long value, bool fits);

/* A figure of a point that objectives and constraints name. */
enum sweep_figure {
    SWEEP_FIG_TOTAL,      /* total median, ns */
    SWEEP_FIG_STAGE,      /* a stage's median, ns */
    SWEEP_FIG_COUNTER,    /* a counter's last value (median over runs); NAME_per_s: the rate of
                           * count counter NAME in its stage, per second */
    SWEEP_FIG_MEMORY,     /* peak memory of the process tree, bytes */
    SWEEP_FIG_GPU_MEMORY, /* peak GPU memory of the workload, bytes */
    SWEEP_FIG_COST,       /* cost of one run, in the price's currency */
};

struct sweep_objective {
    bool maximise;
    enum sweep_figure figure;
    char name[256];       /* stage or counter name */
};
/* "min:total" (the default), "min:stage:NAME", "max:counter:NAME", "min:memory",
 * "min:gpu_memory", "min:cost". Returns 0, or -1 with a message. */
int sweep_objective_parse(const char *spec, struct sweep_objective *o, char *err,
                          size_t errlen);
/* "the lowest total median", "the highest counter train_images_per_s": for the winner's line. */
void sweep_objective_describe(const struct sweep_objective *o, char *buf, size_t len);

enum sweep_op { SWEEP_LE, SWEEP_LT, SWEEP_GE, SWEEP_GT, SWEEP_EQ };
struct sweep_constraint {
    enum sweep_figure figure;
    char name[256];
    enum sweep_op op;
    double value;         /* in the figure's base unit (ns, bytes) */
};
/* "counter:accuracy>=0.9", "memory<=8GiB", "total<2s", "stage:train<=500ms", "cost<=0.01",
 * "gpu_memory<=40GiB". Returns 0, or -1 with a message naming the bad part. */
int sweep_constraint_parse(const char *spec, struct sweep_constraint *c, char *err,
                           size_t errlen);

/* The value of figure (name) in a point's figures; NAN when it has none. */
double sweep_figure_value(const struct doc_sweep_figures *figures, enum sweep_figure figure,
                          const char *name);
/* Whether figures meet c. When not (or the figure is unknown), why says so
 * ("counter accuracy 0.85 < 0.9", "memory unknown"). */
bool sweep_constraint_met(const struct sweep_constraint *c,
                          const struct doc_sweep_figures *figures, char *why, size_t len);
/* Whether figures has what the objective names at all (a counter sent, a stage seen, by name:
 * the other figures are not looked at): for saying after the first run of a point that an
 * objective can never be met. */
bool sweep_objective_known(const struct sweep_objective *o,
                           const struct doc_sweep_figures *figures);

#endif
