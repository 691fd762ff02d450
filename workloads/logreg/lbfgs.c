/* lbfgs: L-BFGS with the More-Thuente line search (see lbfgs.h for the contract and how it
 * mirrors scipy's L-BFGS-B on an unconstrained problem). */
#include "logreg/lbfgs.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logreg/lralloc.h"

/* The line search's constants, L-BFGS-B's: sufficient decrease, curvature, and the relative
 * width of the bracket under which no better step is sought. */
#define LS_FTOL 1e-3
#define LS_GTOL 0.9
#define LS_XTOL 0.1
#define LS_STPMAX 1e10

void lbfgs_default_params(struct lbfgs_params *p)
{
    memset(p, 0, sizeof *p);
    p->history = 10;
    p->max_iter = 100;
    p->max_evals = 15000;
    p->max_linesearch = 20;
    p->pgtol = 1e-4;
    p->factr = 1e7;
}

const char *lbfgs_status_text(enum lbfgs_status status)
{
    switch (status) {
    case LBFGS_CONVERGED_PGTOL:
        return "converged: max |gradient| <= tol";
    case LBFGS_CONVERGED_FTOL:
        return "converged: relative reduction of the loss <= factr * eps";
    case LBFGS_MAX_ITER:
        return "stopped: --max-iter iterations reached";
    case LBFGS_MAX_EVALS:
        return "stopped: evaluation limit reached";
    case LBFGS_LINESEARCH_FAILED:
        return "stopped: the line search found no acceptable step";
    case LBFGS_NOT_FINITE:
        return "failed: the loss or gradient is not finite";
    case LBFGS_NO_MEMORY:
        return "failed: out of memory";
    }
    return "unknown";
}

/* ---- More-Thuente line search on phi(a) = f(x + a d), phi'(a) = g(x + a d)'d. ---- */

/* A step with the function value and derivative there. */
struct mt_point {
    double step, f, g;
};

struct mt_search {
    int bracketed; /* a minimiser lies between best and other */
    int stage;     /* 1 until a step with psi <= 0 and phi' >= 0 is seen */
    double finit, ginit, gtest;
    double width, width1;        /* the bracket's last two widths (bisection test) */
    struct mt_point best, other; /* the interval's ends: best has the least phi */
    double stmin, stmax;         /* where the next trial may go */
};

/* The minimiser of the cubic through (a, fa, ga) and (b, fb, gb), as an offset fraction. The
 * discriminant is clipped at 0: negative only through rounding (or in the third case, when the
 * cubic does not tend to infinity in the direction of the step, where 0 is what is meant). */
static double cubic_gamma(double theta, double ga, double gb)
{
    double s = fmax(fabs(theta), fmax(fabs(ga), fabs(gb)));
    if (s == 0.0)
        return 0.0;
    return s * sqrt(fmax(0.0, (theta / s) * (theta / s) - (ga / s) * (gb / s)));
}

/* One safeguarded step (MINPACK-2's dcstep): updates the interval with the trial (*stp, fp, dp)
 * and puts the next trial in *stp. The four cases are those of More & Thuente, section 4. */
static void mt_step(struct mt_point *x, struct mt_point *y, double *stp, double fp, double dp,
                    int *bracketed, double stmin, double stmax)
{
    double t = *stp, next;
    double sgnd = dp * (x->g / fabs(x->g));

    if (fp > x->f) {
        /* Higher value: bracketed. The cubic step if closer to the best point, else the
         * average of the cubic and quadratic steps. */
        double theta = 3.0 * (x->f - fp) / (t - x->step) + x->g + dp;
        double gamma = cubic_gamma(theta, x->g, dp);
        if (t < x->step)
            gamma = -gamma;
        double p = (gamma - x->g) + theta, q = ((gamma - x->g) + gamma) + dp;
        double stpc = x->step + p / q * (t - x->step);
        double stpq = x->step +
                      x->g / ((x->f - fp) / (t - x->step) + x->g) / 2.0 * (t - x->step);
        next = fabs(stpc - x->step) < fabs(stpq - x->step) ? stpc
                                                            : stpc + (stpq - stpc) / 2.0;
        *bracketed = 1;
    } else if (sgnd < 0.0) {
        /* Lower value, derivatives of opposite sign: bracketed. The cubic step if farther
         * from the trial than the secant step, else the secant step. */
        double theta = 3.0 * (x->f - fp) / (t - x->step) + x->g + dp;
        double gamma = cubic_gamma(theta, x->g, dp);
        if (t > x->step)
            gamma = -gamma;
        double p = (gamma - dp) + theta, q = ((gamma - dp) + gamma) + x->g;
        double stpc = t + p / q * (x->step - t);
        double stpq = t + dp / (dp - x->g) * (x->step - t);
        next = fabs(stpc - t) > fabs(stpq - t) ? stpc : stpq;
        *bracketed = 1;
    } else if (fabs(dp) < fabs(x->g)) {
        /* Lower value, same sign, the derivative shrinks: the cubic step when the cubic tends
         * to infinity in the step's direction or its minimum lies beyond the trial. */
        double theta = 3.0 * (x->f - fp) / (t - x->step) + x->g + dp;
        double gamma = cubic_gamma(theta, x->g, dp);
        if (t > x->step)
            gamma = -gamma;
        double p = (gamma - dp) + theta, q = (gamma + (x->g - dp)) + gamma;
        double r = p / q, stpc;
        if (r < 0.0 && gamma != 0.0)
            stpc = t + r * (x->step - t);
        else
            stpc = t > x->step ? stmax : stmin;
        double stpq = t + dp / (dp - x->g) * (x->step - t);
        if (*bracketed) {
            next = fabs(stpc - t) < fabs(stpq - t) ? stpc : stpq;
            if (t > x->step)
                next = fmin(t + 0.66 * (y->step - t), next);
            else
                next = fmax(t + 0.66 * (y->step - t), next);
        } else {
            next = fabs(stpc - t) > fabs(stpq - t) ? stpc : stpq;
            next = fmax(stmin, fmin(stmax, next));
        }
    } else {
        /* Lower value, same sign, the derivative does not shrink: the cubic step between the
         * trial and the other end if bracketed, else a bound. */
        if (*bracketed) {
            double theta = 3.0 * (fp - y->f) / (y->step - t) + y->g + dp;
            double gamma = cubic_gamma(theta, y->g, dp);
            if (t > y->step)
                gamma = -gamma;
            double p = (gamma - dp) + theta, q = ((gamma - dp) + gamma) + y->g;
            next = t + p / q * (y->step - t);
        } else {
            next = t > x->step ? stmax : stmin;
        }
    }

    if (fp > x->f) {
        *y = (struct mt_point){t, fp, dp};
    } else {
        if (sgnd < 0.0)
            *y = *x;
        *x = (struct mt_point){t, fp, dp};
    }
    *stp = next;
}

/* Starts a search from phi(0) = f, phi'(0) = g < 0 with first trial stp. -1 on bad input. */
static int mt_start(struct mt_search *s, double stp, double f, double g)
{
    if (!(stp > 0.0 && stp <= LS_STPMAX) || !(g < 0.0))
        return -1;
    memset(s, 0, sizeof *s);
    s->stage = 1;
    s->finit = f;
    s->ginit = g;
    s->gtest = LS_FTOL * g;
    s->width = LS_STPMAX;
    s->width1 = 2.0 * LS_STPMAX;
    s->best = s->other = (struct mt_point){0.0, f, g};
    s->stmin = 0.0;
    s->stmax = stp + 4.0 * stp;
    return 0;
}

/* Given phi and phi' at the trial *stp: returns 1 when *stp is to be taken (the strong Wolfe
 * conditions hold, or rounding or the bracket's width leave nothing better), or 0 with the
 * next trial in *stp. */
static int mt_next(struct mt_search *s, double *stp, double f, double g)
{
    double ftest = s->finit + *stp * s->gtest;
    if (s->stage == 1 && f <= ftest && g >= 0.0)
        s->stage = 2;
    if (s->bracketed && (*stp <= s->stmin || *stp >= s->stmax))
        return 1; /* rounding errors prevent progress */
    if (s->bracketed && s->stmax - s->stmin <= LS_XTOL * s->stmax)
        return 1; /* the bracket is narrow enough */
    if (*stp == LS_STPMAX && f <= ftest && g <= s->gtest)
        return 1;
    if (*stp == 0.0 && (f > ftest || g >= s->gtest))
        return 1;
    if (f <= ftest && fabs(g) <= LS_GTOL * -s->ginit)
        return 1; /* strong Wolfe */

    if (s->stage == 1 && f <= s->best.f && f > ftest) {
        /* A lower value without sufficient decrease: step on the modified function
         * psi(a) = phi(a) - phi(0) - ftol a phi'(0), whose minimiser is sought first. */
        struct mt_point bm = {s->best.step, s->best.f - s->best.step * s->gtest,
                              s->best.g - s->gtest};
        struct mt_point om = {s->other.step, s->other.f - s->other.step * s->gtest,
                              s->other.g - s->gtest};
        mt_step(&bm, &om, stp, f - *stp * s->gtest, g - s->gtest, &s->bracketed, s->stmin,
                s->stmax);
        s->best = (struct mt_point){bm.step, bm.f + bm.step * s->gtest, bm.g + s->gtest};
        s->other = (struct mt_point){om.step, om.f + om.step * s->gtest, om.g + s->gtest};
    } else {
        mt_step(&s->best, &s->other, stp, f, g, &s->bracketed, s->stmin, s->stmax);
    }

    if (s->bracketed) {
        double w = fabs(s->other.step - s->best.step);
        if (w >= 0.66 * s->width1)
            *stp = s->best.step + 0.5 * (s->other.step - s->best.step); /* bisect */
        s->width1 = s->width;
        s->width = w;
        s->stmin = fmin(s->best.step, s->other.step);
        s->stmax = fmax(s->best.step, s->other.step);
    } else {
        s->stmin = *stp + 1.1 * (*stp - s->best.step);
        s->stmax = *stp + 4.0 * (*stp - s->best.step);
    }
    *stp = fmax(0.0, fmin(LS_STPMAX, *stp));
    if (s->bracketed && (*stp <= s->stmin || *stp >= s->stmax ||
                         s->stmax - s->stmin <= LS_XTOL * s->stmax))
        *stp = s->best.step; /* no further progress: go back to the best step */
    return 0;
}

/* ---- L-BFGS ---- */

static double dot(long n, const double *a, const double *b)
{
    double s = 0.0;
    for (long i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static double max_abs(long n, const double *a)
{
    double m = 0.0;
    for (long i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

static int all_finite(long n, const double *a)
{
    for (long i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return 0;
    return 1;
}

/* The stored pairs: a ring of `history` (s, y, 1 / s'y), newest at (first + count - 1). */
struct lbfgs_memory {
    int history, first, count;
    double *s, *y, *rho, *alpha;
};

/* d = -H g by the two-loop recursion (H0 = s'y / y'y of the newest pair); d = -g when empty. */
static void lbfgs_direction(const struct lbfgs_memory *m, long n, const double *g, double *d)
{
    for (long i = 0; i < n; i++)
        d[i] = -g[i];
    if (!m->count)
        return;
    for (int k = m->count - 1; k >= 0; k--) {
        int j = (m->first + k) % m->history;
        const double *s = m->s + (size_t)j * n, *y = m->y + (size_t)j * n;
        double a = m->rho[j] * dot(n, s, d);
        m->alpha[j] = a;
        for (long i = 0; i < n; i++)
            d[i] -= a * y[i];
    }
    int newest = (m->first + m->count - 1) % m->history;
    const double *yn = m->y + (size_t)newest * n;
    double gamma = 1.0 / (m->rho[newest] * dot(n, yn, yn));
    for (long i = 0; i < n; i++)
        d[i] *= gamma;
    for (int k = 0; k < m->count; k++) {
        int j = (m->first + k) % m->history;
        const double *s = m->s + (size_t)j * n, *y = m->y + (size_t)j * n;
        double b = m->rho[j] * dot(n, y, d);
        for (long i = 0; i < n; i++)
            d[i] += (m->alpha[j] - b) * s[i];
    }
}

/* Stores s = x - x_old, y = g - g_old unless s'y is too small against -g_old's. */
static void lbfgs_remember(struct lbfgs_memory *m, long n, const double *x, const double *xold,
                           const double *g, const double *gold, double gd_old_times_step)
{
    int j = m->count < m->history ? (m->first + m->count) % m->history : m->first;
    double *s = m->s + (size_t)j * n, *y = m->y + (size_t)j * n;
    double sy = 0.0;
    for (long i = 0; i < n; i++) {
        double si = x[i] - xold[i], yi = g[i] - gold[i];
        sy += si * yi;
        s[i] = si;
        y[i] = yi;
    }
    if (!(sy > DBL_EPSILON * -gd_old_times_step))
        return; /* the slot is reused next time */
    m->rho[j] = 1.0 / sy;
    if (m->count < m->history)
        m->count++;
    else
        m->first = (m->first + 1) % m->history;
}

int lbfgs_minimize(long n, double *x, lbfgs_eval_fn *fn, void *ctx,
                   const struct lbfgs_params *p, struct lbfgs_result *res)
{
    memset(res, 0, sizeof *res);
    int hist = p->history > 0 ? p->history : 1;
    struct lbfgs_memory mem = {.history = hist};
    double *work = lr_alloc_array((size_t)n * (4 + 2 * (size_t)hist) + 2 * (size_t)hist,
                                  sizeof *work);
    if (!work) {
        res->status = LBFGS_NO_MEMORY;
        return -1;
    }
    double *g = work, *d = g + n, *xold = d + n, *gold = xold + n;
    mem.s = gold + n;
    mem.y = mem.s + (size_t)hist * n;
    mem.rho = mem.y + (size_t)hist * n;
    mem.alpha = mem.rho + hist;

    double f = fn(ctx, x, g);
    res->evals = 1;
    if (!isfinite(f) || !all_finite(n, g)) {
        res->status = LBFGS_NOT_FINITE;
        goto out;
    }
    double pg = max_abs(n, g);
    if (pg <= p->pgtol) {
        res->status = LBFGS_CONVERGED_PGTOL;
        goto out;
    }

    for (;;) {
        lbfgs_direction(&mem, n, g, d);
        double gd = dot(n, g, d);
        double stp = 1.0;
        if (res->iterations == 0 && mem.count == 0)
            stp = fmin(1.0 / sqrt(dot(n, d, d)), LS_STPMAX);
        memcpy(xold, x, (size_t)n * sizeof *x);
        memcpy(gold, g, (size_t)n * sizeof *g);
        double fold = f;

        struct mt_search ls;
        int accepted = 0;
        if (mt_start(&ls, stp, f, gd) == 0) {
            for (int tries = 0; tries < p->max_linesearch; tries++) {
                for (long i = 0; i < n; i++)
                    x[i] = xold[i] + stp * d[i];
                f = fn(ctx, x, g);
                res->evals++;
                if (!isfinite(f) || !all_finite(n, g)) {
                    res->status = LBFGS_NOT_FINITE;
                    goto out;
                }
                if (mt_next(&ls, &stp, f, dot(n, g, d))) {
                    accepted = 1;
                    break;
                }
                if (res->evals >= p->max_evals)
                    break;
            }
        }
        if (!accepted) {
            /* As L-BFGS-B: back to the last iterate; retry from steepest descent, or stop. */
            memcpy(x, xold, (size_t)n * sizeof *x);
            memcpy(g, gold, (size_t)n * sizeof *g);
            f = fold;
            if (res->evals >= p->max_evals) {
                res->status = LBFGS_MAX_EVALS;
                break;
            }
            if (mem.count == 0) {
                res->status = LBFGS_LINESEARCH_FAILED;
                res->iterations++;
                break;
            }
            mem.count = mem.first = 0;
            continue;
        }

        res->iterations++;
        pg = max_abs(n, g);
        if (p->progress)
            p->progress(p->progress_ctx, res->iterations, f, pg);
        if (pg <= p->pgtol) {
            res->status = LBFGS_CONVERGED_PGTOL;
            break;
        }
        if (fold - f <= p->factr * DBL_EPSILON * fmax(fmax(fabs(fold), fabs(f)), 1.0)) {
            res->status = LBFGS_CONVERGED_FTOL;
            break;
        }
        if (res->iterations >= p->max_iter) {
            res->status = LBFGS_MAX_ITER;
            break;
        }
        if (res->evals >= p->max_evals) {
            res->status = LBFGS_MAX_EVALS;
            break;
        }
        lbfgs_remember(&mem, n, x, xold, g, gold, gd * stp);
    }
out:
    res->f = f;
    res->pg_max = max_abs(n, g);
    free(work);
    return res->status == LBFGS_NOT_FINITE ? -1 : 0;
}
