/* history_csv.c: `mlbench history --format csv` (history.h): one row per result and stage of
 * the series, oldest result first and its stages in the order of the history, with the
 * median, the interval of the median and the step change that starts there. RFC 4180 and
 * safe from formula injection through csv.c's fields; an empty history is the header alone. */
#include "export/export.h"
#include "export/history.h"

static const char header[] = "id,created,label,command,host,commit,stage,n,median_ns,ci_low_ns,"
                             "ci_high_ns,step_change\r\n";

/* The point of result r in series s, or NULL (points are in the order of the results). */
static const struct doc_history_point *point_of(const struct doc_history_series *s, size_t r,
                                            size_t *index)
{
    size_t lo = 0, hi = s->n_points;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->points[mid].result < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    *index = lo;
    return lo < s->n_points && s->points[lo].result == r ? &s->points[lo] : NULL;
}

static void row(FILE *out, const struct doc_history_result *r, const struct doc_history_series *s,
                const struct doc_history_point *p, size_t index)
{
    const char *const text[] = {r->id, r->created, r->label, r->command, r->host, r->commit,
                                s->stage};
    for (size_t k = 0; k < sizeof text / sizeof text[0]; k++) {
        export_csv_field(out, text[k]);
        fputc(',', out);
    }
    fprintf(out, "%ld,", p->n);
    const double num[] = {p->median_ns, p->ci_low_ns, p->ci_high_ns};
    for (size_t k = 0; k < sizeof num / sizeof num[0]; k++) {
        export_csv_num(out, num[k]);
        fputc(',', out);
    }
    for (size_t c = 0; c < s->n_changes; c++)
        if (s->changes[c].point == index)
            export_csv_num(out, s->changes[c].change_pct);
    fputs("\r\n", out);
}

static int csv_write(FILE *out, const struct doc_history *d, char *err, size_t errlen)
{
    fputs(header, out);
    for (size_t r = 0; r < d->n_results; r++)
        for (size_t k = 0; k < d->n_series; k++) {
            size_t index;
            const struct doc_history_point *p = point_of(&d->series[k], r, &index);
            if (p)
                row(out, &d->results[r], &d->series[k], p, index);
        }
    return export_finish(out, "the CSV history", err, errlen);
}

const struct history_format history_csv = {
    .name = "csv",
    .extension = "csv",
    .write = csv_write,
};
