/* peak: the find-peak search (peak.h). */
#include "load/peak.h"

void peak_init(struct peak_search *s, double start_qps, double tolerance)
{
    *s = (struct peak_search){.tolerance = tolerance, .current = start_qps};
}

bool peak_next(const struct peak_search *s, double *qps, bool *confirm)
{
    if (s->done)
        return false;
    *qps = s->current;
    *confirm = s->confirming;
    return true;
}

/* Chooses the next probe from lo and hi, or the confirming run once they are close. */
static void plan(struct peak_search *s)
{
    if (s->hi == 0) { /* nothing missed yet: double */
        s->current = s->lo * 2;
    } else if (s->lo == 0 && s->hi <= 1e-3) {
        s->done = true; /* not even a thousandth of a query per second */
        return;
    } else if (s->hi - s->lo <= s->tolerance * s->hi && s->lo > 0) {
        s->confirming = true;
        s->current = s->lo;
        return;
    } else {
        s->current = (s->lo + s->hi) / 2;
    }
    if (s->probes >= PEAK_MAX_PROBES) { /* give the best so far its confirmation */
        s->confirming = s->lo > 0;
        s->current = s->lo;
        s->done = s->lo == 0;
    }
}

void peak_report(struct peak_search *s, bool met)
{
    if (s->done)
        return;
    if (s->confirming) {
        s->confirms++;
        s->confirming = false;
        if (met) {
            s->found = s->current;
            s->done = true;
            return;
        }
        s->hi = s->current; /* the short probe was lucky */
        s->lo = s->current * (1 - 2 * s->tolerance);
        if (s->confirms >= PEAK_MAX_CONFIRMS) {
            s->done = true;
            return;
        }
        s->confirming = true;
        s->current = s->lo;
        return;
    }
    s->probes++;
    if (met)
        s->lo = s->current;
    else
        s->hi = s->current;
    plan(s);
}
