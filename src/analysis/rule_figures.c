/* rule_figures: the helpers the bottleneck rule files share (see rule_figures.h): figures
 * written into evidence texts, and what a stage's name says of it. */
#include "analysis/rule_figures.h"

#include <ctype.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/units.h"

/* Appends to the evidence texts, fixed buffers (util/strbuf.h). */
#define cat(...) strbuf_catf(__VA_ARGS__)

/* "1.0 of 16 cores busy" (or "1.0 cores busy" when the CPU count is unknown). */
void rule_figures_cat_cores(char *buf, size_t len, double cores, int ncpu, const char *what)
{
    int decimals = cores < 0.095 ? 2 : 1;
    if (ncpu)
        cat(buf, len, "%.*f of %d %s %s", decimals, cores, ncpu, ncpu == 1 ? "core" : "cores",
            what);
    else
        cat(buf, len, "%.*f cores %s", decimals, cores, what);
}

/* Swapping and memory stalls, what of them was measured. */
void rule_figures_cat_memory(char *buf, size_t len, const struct stage_resources *s,
                             const struct figures *f)
{
    char a[32];
    const char *sep = "";
    if (known(f->swap_bps) && f->swap_bps > 0) {
        char b[32];
        cat(buf, len, "swapping %s/s in and %s/s out",
            units_bytes(known(s->swap_in_bps) ? s->swap_in_bps : 0, a, sizeof a),
            units_bytes(known(s->swap_out_bps) ? s->swap_out_bps : 0, b, sizeof b));
        sep = ", ";
    }
    if (known(s->psi_mem_some)) {
        cat(buf, len, "%stasks stalled on memory %.0f %% of the time", sep, pct(s->psi_mem_some));
        sep = ", ";
    }
    if (known(s->mem_available_min_bytes)) {
        cat(buf, len, "%sas little as %s available", sep,
            units_bytes(s->mem_available_min_bytes, a, sizeof a));
        sep = ", ";
    }
    if (known(s->rss_peak_bytes))
        cat(buf, len, "%sworkload peak RSS %s", sep, units_bytes(s->rss_peak_bytes, a, sizeof a));
}

bool rule_figures_communicates(const char *name)
{
    static const char *const words[] = {"allreduce", "all_reduce", "all-reduce", "allgather",
                                        "all_gather", "reduce_scatter", "reducescatter",
                                        "alltoall", "all_to_all", "broadcast", "barrier",
                                        "nccl", "comm", "collective"};
    char low[128];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof low; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = '\0';
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strstr(low, words[k]))
            return true;
    return false;
}
