/* record_text.c: the line and the JSON object `mlbench record` prints of a stored result
 * (record_text.h). */
#include "export/record_text.h"

#include <math.h>

#include "doc/result.h"
#include "export/text.h"
#include "util/units.h"

/* "1 round", "20 rounds". */
static const char *plural(double n, const char *one, const char *many, char *buf, size_t len)
{
    snprintf(buf, len, "%.0f %s", n, n == 1 ? one : many);
    return buf;
}

struct stored {
    const json_t *doc;
    const struct timings *t;
};

/* The line and the warnings of a stored result. */
static void stored_text(FILE *out, const void *arg)
{
    const struct stored *s = arg;
    const struct timings *t = s->t;
    struct doc_result *r = doc_result_read(s->doc);
    const struct doc_stats *w = &r->summary.wall;
    char med[32], lo[32], hi[32], rounds[48], calls[48];
    fprintf(out, "stored %s  ", r->id ? r->id : "?");
    if (t->label)
        fprintf(out, "label '%s'  ", t->label);
    fprintf(out, "%s: %s per call (median of %s of %s", t->name,
            units_duration(w->median, med, sizeof med),
            plural((double)t->n_rounds, "round", "rounds", rounds, sizeof rounds),
            plural(t->number, "call", "calls", calls, sizeof calls));
    if (isfinite(w->ci_low) && isfinite(w->ci_high) && isfinite(w->ci_level) && w->n >= 3)
        /* The interval is the 95 % one from 6 rounds on (stats.h); below, it says what it
         * covers. */
        fprintf(out, ", %.0f%% CI %s .. %s", w->ci_level >= 0.95 ? 95 : floor(100 * w->ci_level),
                units_duration(w->ci_low, lo, sizeof lo), units_duration(w->ci_high, hi, sizeof hi));
    fputs(")\n", out);
    for (size_t i = 0; i < r->n_warnings; i++)
        fprintf(out, "  ! %s\n", r->warnings[i].message ? r->warnings[i].message : "");
    doc_result_free(r);
}

int export_record_print(FILE *out, const json_t *doc, const struct timings *t)
{
    const struct stored s = {doc, t};
    return export_text_draw(out, stored_text, &s);
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *export_record_json(const json_t *doc, const struct timings *t, const char *path)
{
    struct doc_result *r = doc_result_read(doc);
    const struct doc_stats *w = &r->summary.wall;
    json_t *j = json_pack("{s:s?, s:o, s:s, s:o, s:o, s:o, s:o, s:I}", "id", r->id,
                          "label", t->label ? json_string(t->label) : json_null(),
                          "name", t->name, "path", path ? json_string(path) : json_null(),
                          "median_ns", num_or_null(w->median), "ci_low_ns", num_or_null(w->ci_low),
                          "ci_high_ns", num_or_null(w->ci_high), "n", (json_int_t)w->n);
    doc_result_free(r);
    return j;
}
