/* rank_findings: the rules about a multi-rank job's ranks (docs/analysis.md, "Ranks"), a row of
 * finding_checks.h (FINDING_JOB).
 *
 * straggler: a rank spends STRAGGLER_MIN longer in a stage than the median rank, and that
 *   difference is at least STRAGGLER_MIN_SHARE of the run: at every synchronisation the job
 *   waits for it. Saving: the difference (the slowest rank at the median's pace).
 * communication-bound: a stage whose name says it communicates (allreduce, all_gather,
 *   barrier...) takes COMM_MIN_SHARE of the run on the critical path. Where its fastest rank
 *   spends much less there than the slowest, the ranks mostly wait in it for a straggler (a
 *   rank that computes slower arrives last and waits least): the advice says so instead of
 *   advising on the communication itself. */
#include "analysis/finding_checks.h"

#include <string.h>

#include "util/strbuf.h"

#define STRAGGLER_MIN 0.10        /* slowest rank this much above the median rank */
#define STRAGGLER_MIN_SHARE 0.01  /* ...by this share of the run at least */
#define COMM_MIN_SHARE 0.25       /* a communication stage this large dominates */
#define COMM_WAIT 0.5             /* fastest rank under this share of the slowest: waiting */

#define cat(...) strbuf_catf(__VA_ARGS__)

static const struct stage_resources *find_stage(const struct stage_resources *stages, size_t n,
                                                const struct stage_resources *total,
                                                const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (stages[i].name && strcmp(stages[i].name, name) == 0)
            return &stages[i];
    return total ? total : n ? &stages[0] : NULL;
}

static void ms(char *buf, size_t len, double ns)
{
    cat(buf, len, ns >= 1e9 ? "%.2f s" : "%.1f ms", ns >= 1e9 ? ns / 1e9 : ns / 1e6);
}

static void rank_findings_add(const struct finding_input *in, struct findings_builder *b)
{
    const struct analysis_context *ctx = in->ctx;
    const struct stage_resources *stages = in->stages, *total = in->total;
    size_t n = in->n;
    if (ctx->wall_ns <= 0)
        return;
    for (size_t i = 0; i < ctx->n_rank_stages; i++) {
        const struct rank_stage_figures *r = &ctx->rank_stages[i];
        const struct stage_resources *s = find_stage(stages, n, total, r->name);
        if (!s || r->ranks < 2 || !known(r->median_ns) || r->median_ns <= 0)
            continue;
        char ev[TEXT_MAX] = "", rec[TEXT_MAX] = "";
        double extra = r->slowest_ns - r->median_ns;
        bool comm = rule_figures_communicates(r->name);
        if (!comm && extra >= STRAGGLER_MIN * r->median_ns &&
            extra >= STRAGGLER_MIN_SHARE * ctx->wall_ns) {
            cat(ev, sizeof ev, "rank %d spends %.0f %% longer in %s than the median rank (",
                r->slowest_rank, pct(extra / r->median_ns), r->name);
            ms(ev, sizeof ev, r->slowest_ns);
            cat(ev, sizeof ev, " against ");
            ms(ev, sizeof ev, r->median_ns);
            cat(ev, sizeof ev, " a run, over %zu ranks)", r->ranks);
            if (r->slowest_host)
                cat(ev, sizeof ev, "; rank %d runs on %s", r->slowest_rank, r->slowest_host);
            cat(rec, sizeof rec, "the job waits for its slowest rank at every synchronisation: "
                "look at what differs on rank %d: its share of the data (uneven shards or "
                "sequence lengths), its host or GPU (clocks, throttling, another job), its CPU "
                "binding (mpirun --bind-to core, --map-by); then balance the work per rank",
                r->slowest_rank);
            findings_add(b, "straggler", s, ev, rec, extra);
            continue;
        }
        if (!comm || !known(r->critical_ns) || r->critical_ns < COMM_MIN_SHARE * ctx->wall_ns)
            continue;
        cat(ev, sizeof ev, "%s takes %.0f %% of the run on its slowest rank (", r->name,
            pct(r->critical_ns / ctx->wall_ns));
        ms(ev, sizeof ev, r->critical_ns);
        cat(ev, sizeof ev, "); the fastest rank, %d, spends ", r->fastest_rank);
        ms(ev, sizeof ev, r->min_ns);
        cat(ev, sizeof ev, " there");
        double saving = 0;
        if (r->min_ns < COMM_WAIT * r->critical_ns) {
            cat(rec, sizeof rec, "most of it is waiting: the ranks reach %s at different times, "
                "and rank %d, which arrives last, waits least; make the ranks' work equal "
                "before the collective (see the straggler finding, if any) rather than tuning "
                "the communication", r->name, r->fastest_rank);
            saving = r->critical_ns - r->min_ns;
        } else {
            cat(rec, sizeof rec, "communication dominates the step: send fewer bytes less often "
                "(gradients in bf16 or fp16, gradient accumulation over several steps, a "
                "larger batch per rank), overlap it with the backward pass (bucketed "
                "allreduce, as DDP does), or put the ranks on fewer hosts");
        }
        findings_add(b, "communication-bound", s, ev, rec, saving);
    }
}

const struct finding_check rank_findings_check = {FINDING_JOB, rank_findings_add};
