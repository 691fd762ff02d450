/* sweep_plan: parameters, product, substitution, order, search, objectives (see sweep_plan.h). */
#include "session/sweep_plan.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/units.h"
#include "util/xalloc.h"

static size_t ident_len(const char *s)
{
    size_t n = 0;
    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    return n;
}

static int check_name(const char *name, const char *opt, char *err, size_t errlen)
{
    size_t n = ident_len(name);
    if (n == 0 || name[n] || n > SWEEP_MAX_NAME) {
        snprintf(err, errlen, "%s: parameter name '%.80s' is not a name of letters, digits and '_' "
                 "(at most %d, not starting with a digit), e.g. batch", opt, name, SWEEP_MAX_NAME);
        return -1;
    }
    return 0;
}

static bool is_number(const char *s)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return false;
    errno = 0;
    double v = strtod(s, &end);
    return !errno && end != s && !*end && isfinite(v);
}

static void finish_param(struct sweep_param *p)
{
    p->numeric = p->n > 0;
    for (size_t i = 0; i < p->n; i++)
        p->numeric = p->numeric && is_number(p->values[i]);
}

int sweep_param_list(struct sweep_param *out, const char *name, const char *values, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check_name(name, "-L", err, errlen))
        return -1;
    if (!*values) {
        snprintf(err, errlen, "-L %s: no values: give them separated by commas, e.g. -L %s 32,64",
                 name, name);
        return -1;
    }
    out->name = xstrdup(name);
    const char *s = values;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len == 0) {
            snprintf(err, errlen, "-L %s '%.200s': an empty value (two commas, or one at an "
                     "end): give each value once, e.g. -L %s 32,64", name, values, name);
            sweep_param_free(out);
            return -1;
        }
        if (out->n >= SWEEP_MAX_POINTS) {
            snprintf(err, errlen, "-L %s: more than %d values", name, SWEEP_MAX_POINTS);
            sweep_param_free(out);
            return -1;
        }
        char *v = xstrndup(s, len);
        for (size_t i = 0; i < out->n; i++)
            if (!strcmp(out->values[i], v)) {
                snprintf(err, errlen, "-L %s: value '%.200s' is given twice: give each value once",
                         name, v);
                free(v);
                sweep_param_free(out);
                return -1;
            }
        out->values = xreallocarray(out->values, out->n + 1, sizeof *out->values);
        out->values[out->n++] = v;
        if (!comma)
            break;
        s = comma + 1;
    }
    finish_param(out);
    return 0;
}

static char *format_number(double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.12g", v);
    return xstrdup(buf);
}

static int parse_number(const char *s, const char *what, const char *name, double *out,
                        char *err, size_t errlen)
{
    if (!is_number(s)) {
        snprintf(err, errlen, "-P %s: %s '%.80s' is not a number", name, what, s);
        return -1;
    }
    *out = strtod(s, NULL);
    return 0;
}

int sweep_param_range(struct sweep_param *out, const char *name, const char *min,
                      const char *max, const char *step, bool pow2, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double lo, hi, d = 1;
    if (check_name(name, "-P", err, errlen) ||
        parse_number(min, "MIN", name, &lo, err, errlen) ||
        parse_number(max, "MAX", name, &hi, err, errlen) ||
        (step && parse_number(step, "step (-D)", name, &d, err, errlen)))
        return -1;
    if (lo > hi) {
        snprintf(err, errlen, "-P %s %s %s: MIN is above MAX: give the smaller first", name, min,
                 max);
        return -1;
    }
    if (step && pow2) {
        snprintf(err, errlen, "-P %s: give -D STEP or --pow2, not both", name);
        return -1;
    }
    if (d <= 0) {
        snprintf(err, errlen, "-P %s: step (-D) '%s' is not above 0", name, step);
        return -1;
    }
    out->name = xstrdup(name);
    if (pow2) {
        if (hi < 1) {
            snprintf(err, errlen, "-P %s %s %s --pow2: no power of two in the range", name, min,
                     max);
            sweep_param_free(out);
            return -1;
        }
        for (double v = 1; v <= hi && out->n <= SWEEP_MAX_POINTS; v *= 2)
            if (v >= lo) {
                out->values = xreallocarray(out->values, out->n + 1, sizeof *out->values);
                out->values[out->n++] = format_number(v);
            }
        if (out->n == 0) {
            snprintf(err, errlen, "-P %s %s %s --pow2: no power of two in the range", name, min,
                     max);
            sweep_param_free(out);
            return -1;
        }
    } else {
        /* Counted, not accumulated: 0.1 steps do not drift past MAX. */
        double count = floor((hi - lo) / d * (1 + 1e-12)) + 1;
        if (count > SWEEP_MAX_POINTS) {
            snprintf(err, errlen, "-P %s %s %s: %.0f values, more than %d: give a larger step "
                     "with -D", name, min, max, count, SWEEP_MAX_POINTS);
            sweep_param_free(out);
            return -1;
        }
        out->values = xcalloc((size_t)count, sizeof *out->values);
        for (size_t i = 0; i < (size_t)count; i++) {
            double v = lo + (double)i * d;
            out->values[out->n++] = format_number(fabs(v) < 1e-12 * d ? 0 : v);
        }
    }
    if (out->n > SWEEP_MAX_POINTS) {
        snprintf(err, errlen, "-P %s: more than %d values", name, SWEEP_MAX_POINTS);
        sweep_param_free(out);
        return -1;
    }
    finish_param(out);
    return 0;
}

void sweep_param_free(struct sweep_param *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->values[i]);
    free(p->values);
    free(p->name);
    memset(p, 0, sizeof *p);
}

size_t sweep_product_size(const struct sweep_param *params, size_t n)
{
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        if (params[i].n == 0)
            return 0;
        total *= params[i].n;
        if (total > SWEEP_MAX_POINTS)
            return 0;
    }
    return total;
}

void sweep_combination(const struct sweep_param *params, size_t n, size_t k, size_t *idx)
{
    for (size_t i = n; i-- > 0;) {
        idx[i] = k % params[i].n;
        k /= params[i].n;
    }
}

static long find_param(const struct sweep_param *params, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(params[i].name) == len && !strncmp(params[i].name, name, len))
            return (long)i;
    return -1;
}

char *sweep_substitute(const char *s, const char *what, const struct sweep_param *params,
                       size_t n, const size_t *idx, bool *used, char *err, size_t errlen)
{
    struct strbuf out = STRBUF_INIT;
    for (const char *p = s; *p;) {
        if (p[0] == '{' && p[1] == '{') { /* {{NAME}}: a literal {NAME} */
            size_t len = ident_len(p + 2);
            if (len && p[2 + len] == '}' && p[3 + len] == '}') {
                strbuf_printf(&out, "{%.*s}", (int)len, p + 2);
                p += len + 4;
                continue;
            }
        }
        if (p[0] == '{') {
            size_t len = ident_len(p + 1);
            if (len && p[1 + len] == '}') {
                long j = find_param(params, n, p + 1, len);
                if (j < 0) {
                    struct strbuf names = STRBUF_INIT;
                    for (size_t i = 0; i < n; i++)
                        strbuf_printf(&names, "%s%s", i ? ", " : "", params[i].name);
                    int shown = (int)(len > 80 ? 80 : len);
                    snprintf(err, errlen, "%s has {%.*s}, which names no parameter (%s: %s); "
                             "write {{%.*s}} for a literal {%.*s}", what, shown, p + 1,
                             n == 1 ? "the parameter is" : "the parameters are",
                             names.len ? names.s : "none", shown, p + 1, shown, p + 1);
                    strbuf_free(&names);
                    strbuf_free(&out);
                    return NULL;
                }
                if (used)
                    used[j] = true;
                strbuf_puts(&out, params[j].values[idx[j]]);
                p += len + 2;
                continue;
            }
        }
        strbuf_putc(&out, *p);
        p++;
    }
    return strbuf_take(&out);
}

char *sweep_point_name(const struct sweep_param *params, size_t n, const size_t *idx)
{
    struct strbuf out = STRBUF_INIT;
    for (size_t i = 0; i < n; i++)
        strbuf_printf(&out, "%s%s=%s", i ? " " : "", params[i].name, params[i].values[idx[i]]);
    return strbuf_take(&out);
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sweep_shuffle(size_t *order, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        /* Rejection keeps every permutation equally likely. */
        uint64_t limit = UINT64_MAX - UINT64_MAX % i, r;
        do
            r = splitmix64(state);
        while (r >= limit);
        size_t j = (size_t)(r % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

#define SEARCH_MAX (1LL << 40)

static long long floor_pow2(long long v)
{
    long long p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

int sweep_search_parse(struct sweep_search *s, char *name, const char *spec, bool pow2,
                       char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const char *eq = strchr(spec, '=');
    const char *dots = eq ? strstr(eq, "..") : NULL;
    if (!eq || !dots) {
        snprintf(err, errlen, "--find-max '%.200s' is not NAME=LO..HI, e.g. --find-max "
                 "batch=16..65536", spec);
        return -1;
    }
    char nm[SWEEP_MAX_NAME + 1];
    size_t nlen = (size_t)(eq - spec);
    if (nlen > SWEEP_MAX_NAME) {
        snprintf(err, errlen, "--find-max: parameter name '%.80s...' is longer than %d characters",
                 spec, SWEEP_MAX_NAME);
        return -1;
    }
    snprintf(nm, sizeof nm, "%.*s", (int)nlen, spec);
    if (check_name(nm, "--find-max", err, errlen))
        return -1;
    char lo_s[32], hi_s[32];
    snprintf(lo_s, sizeof lo_s, "%.*s", (int)((size_t)(dots - eq - 1) < 31 ? dots - eq - 1 : 31),
             eq + 1);
    snprintf(hi_s, sizeof hi_s, "%.31s", dots + 2);
    long lo, hi;
    if (units_parse_long(lo_s, 1, SEARCH_MAX, &lo) || units_parse_long(hi_s, 1, SEARCH_MAX, &hi)) {
        snprintf(err, errlen, "--find-max '%.200s': LO and HI must be whole numbers from 1 to "
                 "%lld, e.g. batch=16..65536", spec, SEARCH_MAX);
        return -1;
    }
    if (lo > hi) {
        snprintf(err, errlen, "--find-max '%.200s': LO %ld is above HI %ld: give the smaller first",
                 spec, lo, hi);
        return -1;
    }
    if (pow2) {
        long long l = floor_pow2(lo);
        if (l < lo)
            l *= 2;
        long long h = floor_pow2(hi);
        if (l > h) {
            snprintf(err, errlen, "--find-max '%.200s' --pow2: no power of two from %ld to %ld",
                     spec, lo, hi);
            return -1;
        }
        lo = (long)l;
        hi = (long)h;
    }
    snprintf(name, SWEEP_MAX_NAME + 1, "%s", nm);
    s->lo = lo;
    s->hi = hi;
    s->pow2 = pow2;
    s->last_fit = s->first_fail = -1;
    s->next = lo;
    return 0;
}

static int log2ll(long long v)
{
    int e = 0;
    while (v > 1) {
        v >>= 1;
        e++;
    }
    return e;
}

/* The next value between the last fit a and the first failure b, or -1 when none is left. */
static long long midpoint(const struct sweep_search *s, long long a, long long b)
{
    if (s->pow2) {
        int ea = log2ll(a), eb = log2ll(b);
        return eb - ea <= 1 ? -1 : 1LL << (ea + (eb - ea) / 2);
    }
    return b - a <= 1 ? -1 : a + (b - a) / 2;
}

void sweep_search_report(struct sweep_search *s, long long value, bool fits)
{
    if (fits) {
        if (value > s->last_fit)
            s->last_fit = value;
    } else if (s->first_fail < 0 || value < s->first_fail) {
        s->first_fail = value;
    }
    if (s->last_fit < 0) /* the lowest value does not fit: nothing does */
        s->next = -1;
    else if (s->first_fail < 0) /* still doubling */
        s->next = s->last_fit >= s->hi ? -1 : (s->last_fit * 2 > s->hi ? s->hi : s->last_fit * 2);
    else
        s->next = midpoint(s, s->last_fit, s->first_fail);
}

/* Figure names for objectives and constraints: "total", "stage:NAME", "counter:NAME",
 * "memory", "gpu_memory", "cost". Parses the figure at the start of spec (up to end, which is
 * the end of the name), into *fig and name. Returns 0, or -1. */
static int parse_figure(const char *spec, size_t len, enum sweep_figure *fig, char *name,
                        size_t name_len)
{
    static const struct { const char *word; enum sweep_figure fig; } plain[] = {
        {"total", SWEEP_FIG_TOTAL}, {"memory", SWEEP_FIG_MEMORY},
        {"gpu_memory", SWEEP_FIG_GPU_MEMORY}, {"cost", SWEEP_FIG_COST},
    };
    name[0] = '\0';
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strlen(plain[i].word) == len && !strncmp(spec, plain[i].word, len)) {
            *fig = plain[i].fig;
            return 0;
        }
    const char *kinds[] = {"stage:", "counter:"};
    for (size_t i = 0; i < 2; i++) {
        size_t k = strlen(kinds[i]);
        if (len > k && !strncmp(spec, kinds[i], k) && len - k < name_len) {
            *fig = i == 0 ? SWEEP_FIG_STAGE : SWEEP_FIG_COUNTER;
            snprintf(name, name_len, "%.*s", (int)(len - k), spec + k);
            return 0;
        }
    }
    return -1;
}

static const char figures_help[] =
    "total, stage:NAME, counter:NAME (counter:NAME_per_s for the rate of count counter NAME), "
    "memory, gpu_memory or cost";

int sweep_objective_parse(const char *spec, struct sweep_objective *o, char *err,
                          size_t errlen)
{
    memset(o, 0, sizeof *o);
    bool min = !strncmp(spec, "min:", 4), max = !strncmp(spec, "max:", 4);
    if ((!min && !max) ||
        parse_figure(spec + 4, strlen(spec + 4), &o->figure, o->name, sizeof o->name)) {
        snprintf(err, errlen, "--objective '%.200s' is not min:FIGURE or max:FIGURE, where FIGURE "
                 "is %s (e.g. min:total, max:counter:train_images_per_s)", spec, figures_help);
        return -1;
    }
    o->maximise = max;
    return 0;
}

static const char *figure_word(enum sweep_figure f)
{
    switch (f) {
    case SWEEP_FIG_TOTAL: return "total median";
    case SWEEP_FIG_STAGE: return "median of stage";
    case SWEEP_FIG_COUNTER: return "counter";
    case SWEEP_FIG_MEMORY: return "peak memory";
    case SWEEP_FIG_GPU_MEMORY: return "peak GPU memory";
    case SWEEP_FIG_COST: return "cost per run";
    }
    return "?";
}

void sweep_objective_describe(const struct sweep_objective *o, char *buf, size_t len)
{
    snprintf(buf, len, "the %s %s%s%s", o->maximise ? "highest" : "lowest", figure_word(o->figure),
             o->name[0] ? " " : "", o->name);
}

int sweep_constraint_parse(const char *spec, struct sweep_constraint *c, char *err,
                           size_t errlen)
{
    static const struct { const char *text; enum sweep_op op; } ops[] = {
        {"<=", SWEEP_LE}, {">=", SWEEP_GE}, {"==", SWEEP_EQ}, {"<", SWEEP_LT}, {">", SWEEP_GT},
    };
    memset(c, 0, sizeof *c);
    const char *at = strpbrk(spec, "<>=");
    size_t oplen = 0;
    for (size_t i = 0; at && i < sizeof ops / sizeof ops[0]; i++)
        if (!strncmp(at, ops[i].text, strlen(ops[i].text))) {
            c->op = ops[i].op;
            oplen = strlen(ops[i].text);
            break;
        }
    if (!at || !oplen ||
        parse_figure(spec, (size_t)(at - spec), &c->figure, c->name, sizeof c->name)) {
        snprintf(err, errlen, "--constraint '%.200s' is not FIGURE<=VALUE (or <, >=, >, ==), where "
                 "FIGURE is %s (e.g. counter:accuracy>=0.9, memory<=8GiB)", spec, figures_help);
        return -1;
    }
    const char *v = at + oplen;
    int bad;
    switch (c->figure) {
    case SWEEP_FIG_MEMORY:
    case SWEEP_FIG_GPU_MEMORY:
        bad = units_parse_bytes(v, &c->value);
        break;
    case SWEEP_FIG_TOTAL:
    case SWEEP_FIG_STAGE:
        bad = units_parse_seconds(v, &c->value);
        c->value *= 1e9;
        break;
    default: {
        char *end;
        errno = 0;
        c->value = strtod(v, &end);
        bad = errno || end == v || *end || !isfinite(c->value);
    }
    }
    if (bad) {
        snprintf(err, errlen, "--constraint '%.200s': '%.80s' is not %s", spec, v,
                 c->figure == SWEEP_FIG_MEMORY || c->figure == SWEEP_FIG_GPU_MEMORY
                     ? "a size (e.g. 8GiB, 512MiB)"
                 : c->figure == SWEEP_FIG_TOTAL || c->figure == SWEEP_FIG_STAGE
                     ? "a duration (e.g. 2s, 150ms)" : "a number");
        return -1;
    }
    return 0;
}

/* The counter a counter figure names, and whether it means its rate. */
static const struct doc_sweep_counter *counter_of(const struct doc_sweep_figures *f,
                                                  const char *name, bool *rate)
{
    const struct doc_sweep_counter *c = doc_sweep_counter(f, name);
    *rate = false;
    size_t len = strlen(name);
    if (!c && len > 6 && !strcmp(name + len - 6, "_per_s")) {
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(len - 6), name);
        c = doc_sweep_counter(f, base);
        *rate = c != NULL;
    }
    return c;
}

double sweep_figure_value(const struct doc_sweep_figures *f, enum sweep_figure figure,
                          const char *name)
{
    bool rate;
    const struct doc_sweep_counter *c;
    const struct doc_sweep_stage *st;
    switch (figure) {
    case SWEEP_FIG_TOTAL:
        return f->total_median_ns;
    case SWEEP_FIG_STAGE:
        st = doc_sweep_stage(f, name);
        return st ? st->median_ns : NAN;
    case SWEEP_FIG_COUNTER:
        c = counter_of(f, name, &rate);
        return !c ? NAN : rate ? c->rate_per_s : c->last_median;
    case SWEEP_FIG_MEMORY:
        return f->peak_memory_bytes;
    case SWEEP_FIG_GPU_MEMORY:
        return f->gpu_memory_peak_bytes;
    case SWEEP_FIG_COST:
        return f->cost_per_run;
    }
    return NAN;
}

bool sweep_objective_known(const struct sweep_objective *o, const struct doc_sweep_figures *f)
{
    bool rate;
    if (o->figure == SWEEP_FIG_COUNTER)
        return counter_of(f, o->name, &rate) != NULL;
    if (o->figure == SWEEP_FIG_STAGE)
        return doc_sweep_stage(f, o->name) != NULL;
    return true;
}

static void format_figure(enum sweep_figure f, double v, char *buf, size_t len)
{
    if (f == SWEEP_FIG_TOTAL || f == SWEEP_FIG_STAGE)
        units_duration(v, buf, len);
    else if (f == SWEEP_FIG_MEMORY || f == SWEEP_FIG_GPU_MEMORY)
        units_bytes(v, buf, len);
    else
        snprintf(buf, len, "%.6g", v);
}

bool sweep_constraint_met(const struct sweep_constraint *c,
                          const struct doc_sweep_figures *figures, char *why, size_t len)
{
    static const char *const op_text[] = {"<=", "<", ">=", ">", "=="};
    static const char *const not_text[] = {">", ">=", "<", "<=", "!="};
    double v = sweep_figure_value(figures, c->figure, c->name);
    const char *what = figure_word(c->figure);
    if (isnan(v)) {
        snprintf(why, len, "%s%s%s unknown", what, c->name[0] ? " " : "", c->name);
        return false;
    }
    bool ok = c->op == SWEEP_LE ? v <= c->value : c->op == SWEEP_LT ? v < c->value
            : c->op == SWEEP_GE ? v >= c->value : c->op == SWEEP_GT ? v > c->value
            : v == c->value;
    if (!ok) {
        char have[48], want[48];
        format_figure(c->figure, v, have, sizeof have);
        format_figure(c->figure, c->value, want, sizeof want);
        snprintf(why, len, "%s%s%.200s %s %s %s (wanted %s %s)", what, c->name[0] ? " " : "",
                 c->name, have, not_text[c->op], want, op_text[c->op], want);
    }
    return ok;
}
