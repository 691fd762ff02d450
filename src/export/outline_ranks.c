/* outline_ranks: the "Ranks" section of a report on a multi-rank job (docs/ranks.md): its stages
 * across the ranks, which host each rank ran on, and the other hosts' resources. */
#include "export/outline_sections.h"

#include "doc/result.h"
#include "util/strbuf.h"

void outline_ranks(struct outline *o, const struct doc_result *r)
{
    const struct doc_ranks *ranks = &r->summary.ranks;
    struct export_table t;
    export_ranks_table(&t, ranks);
    if (!t.nrows) {
        export_table_free(&t);
        return;
    }
    outline_heading(o, o->level, "Ranks");
    outline_para(o, "Across %zu ranks: per run, the slowest rank's time in each stage (what the "
                 "job waits for), the median and the fastest rank's; medians over the runs. Skew "
                 "is slowest / fastest (1 is balanced).",
                 ranks->n_ranks);
    outline_table(o, &t);
    const json_t *hosts = ranks->hosts, *list;
    const char *host;
    if (json_object_size(hosts)) {
        outline_para(o, "The host of each rank, as its mlbench rank-exec named it:");
        struct strvec l = STRVEC_INIT;
        json_object_foreach((json_t *)hosts, host, list) {
            struct strbuf which = STRBUF_INIT;
            size_t i;
            const json_t *rank;
            json_array_foreach(list, i, rank)
                strbuf_printf(&which, "%s%lld", i ? ", " : "",
                              (long long)json_integer_value(rank));
            strvec_pushf(&l, "%s: rank%s %s", host, json_array_size(list) == 1 ? "" : "s",
                   which.s);
            strbuf_free(&which);
        }
        o_list(o, &l);
    }
    export_hosts_table(&t, r);
    if (t.nrows) {
        outline_para(o, "Other hosts, sampled there by one of their ranks' mlbench rank-exec "
                     "(the processes of the launcher's daemon, every rank of the job on that "
                     "host, and the host itself); means over the runs.");
        outline_table(o, &t);
    } else {
        export_table_free(&t);
    }
}
