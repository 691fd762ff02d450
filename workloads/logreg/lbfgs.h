/* lbfgs: unconstrained limited-memory BFGS with the More-Thuente line search, following what
 * scipy's L-BFGS-B does without bounds (the solver behind scikit-learn's
 * LogisticRegression(solver="lbfgs")), so that iteration counts and stopping points compare:
 *  - the direction is -H g with H from the last `history` pairs (two-loop recursion, initial
 *    scaling s'y / y'y); the first step is 1 / ||g||, later ones start at 1;
 *  - the line search finds a step with f(x + a d) <= f(x) + 1e-3 a g'd and
 *    |g(x + a d)'d| <= 0.9 |g'd| (strong Wolfe; More & Thuente 1994, as MINPACK-2's dcsrch),
 *    at most max_linesearch evaluations; when it fails the memory is dropped and the iteration
 *    retried from steepest descent, and a failure from steepest descent ends the run;
 *  - a pair with s'y <= eps * (-g'd) a is not stored (curvature too small);
 *  - after each iteration it stops when max |g_i| <= pgtol (scipy's projected gradient, gtol),
 *    or when (f_old - f) <= factr * eps * max(|f_old|, |f|, 1) (scipy's ftol = factr * eps),
 *    or after max_iter iterations or max_evals evaluations.
 * Pure: no globals, no threads of its own; thread-safe on distinct calls. */
#ifndef MLBENCH_WL_LBFGS_H
#define MLBENCH_WL_LBFGS_H

/* The objective: returns f(x) and writes its gradient into grad (n entries). */
typedef double lbfgs_eval_fn(void *ctx, const double *x, double *grad);

struct lbfgs_params {
    int history;        /* pairs kept (scipy's maxcor: 10) */
    int max_iter;       /* iterations (scikit-learn's max_iter: 100 by default) */
    int max_evals;      /* objective evaluations (scipy's maxfun: 15000) */
    int max_linesearch; /* evaluations per line search (L-BFGS-B: 20) */
    double pgtol;       /* on max |gradient| (scikit-learn's tol: 1e-4) */
    double factr;       /* relative reduction, in units of DBL_EPSILON (scipy: 1e7) */
    /* Called after each iteration when not NULL (iteration, f, max |gradient|). */
    void (*progress)(void *ctx, int iteration, double f, double pg_max);
    void *progress_ctx;
};

enum lbfgs_status {
    LBFGS_CONVERGED_PGTOL,   /* max |gradient| <= pgtol */
    LBFGS_CONVERGED_FTOL,    /* relative reduction of f <= factr * eps */
    LBFGS_MAX_ITER,          /* max_iter iterations done */
    LBFGS_MAX_EVALS,         /* max_evals evaluations done */
    LBFGS_LINESEARCH_FAILED, /* no acceptable step even along -gradient; x is the last iterate */
    LBFGS_NOT_FINITE,        /* the objective returned NaN or infinity */
    LBFGS_NO_MEMORY,
};

struct lbfgs_result {
    enum lbfgs_status status;
    int iterations; /* counted like scipy's nit (scikit-learn's n_iter_) */
    int evals;      /* objective evaluations (scipy's nfev) */
    double f;       /* at the returned x */
    double pg_max;  /* max |gradient| at the returned x */
};

/* scipy's and scikit-learn's defaults (max_iter 100). */
void lbfgs_default_params(struct lbfgs_params *p);

/* Minimises fn from x (n entries, replaced by the result). Returns 0 when the run ended
 * normally (converged, or a limit reached, or a failed line search: the status says which and
 * x is the best iterate), -1 on LBFGS_NOT_FINITE or LBFGS_NO_MEMORY. *res is always filled. */
int lbfgs_minimize(long n, double *x, lbfgs_eval_fn *fn, void *ctx,
                   const struct lbfgs_params *p, struct lbfgs_result *res);

/* A short text for a status ("converged: max |gradient| <= tol", ...); static storage. */
const char *lbfgs_status_text(enum lbfgs_status status);

#endif
