/* sweep: the choose-device, parse-lists, check-then-time driver of gemm and mlp (see sweep.h). */
#include "common/sweep.h"

#include <stdio.h>

#include "common/opts.h"
#include "mlbench/marker.h"

int sweep_main(const struct sweep_parts *w, const struct sweep_args *a, void *ctx)
{
    struct device dev;
    if (device_choose(w->wl, (enum device_choice)a->device, &dev))
        return 2;
    int sizes[DEVICE_LIST_MAX], precisions[DEVICE_LIST_MAX];
    int n_sizes = device_parse_ints(w->wl, w->list_opt,
                                    a->list ? a->list : dev.cuda ? w->list_cuda : w->list_cpu,
                                    w->list_min, w->list_max, sizes);
    int n_prec = device_parse_precisions(w->wl, "precision",
                                         a->precisions ? a->precisions
                                         : dev.cuda    ? w->precisions_cuda
                                                       : w->precisions_cpu,
                                         precisions);
    if (n_sizes < 0 || n_prec < 0)
        return 2;
    for (int i = 0; i < n_prec; i++)
        if (!dev.cuda && precisions[i] != GEMM_FP32) {
            wl_error(w->wl, "--precision %s needs --device cuda; %s",
                     precision_names[precisions[i]], w->cpu_fp32);
            return 2;
        }
    if (w->setup(ctx, &dev))
        return 2;
    if (a->max_memory > 0 && w->need_bytes) {
        /* the largest need of the lists: the run fails before measuring, as a real one would
         * at its largest point, and a point that fits is never half measured */
        double most = 0;
        int at_p = 0, at_s = 0;
        char what[256] = "";
        for (int p = 0; p < n_prec; p++)
            for (int s = 0; s < n_sizes; s++) {
                char w1[256];
                double b = w->need_bytes(ctx, &dev, precisions[p], sizes[s], w1, sizeof w1);
                if (b > most) {
                    most = b;
                    at_p = p;
                    at_s = s;
                    snprintf(what, sizeof what, "%s", w1);
                }
            }
        if (most > (double)a->max_memory) {
            char need[32], max[32];
            return wl_out_of_memory(w->wl, "%s-%s%d needs %s, over --max-memory %s (%s)",
                                    precision_names[precisions[at_p]], w->stage_tag,
                                    sizes[at_s], wl_format_bytes(most, need, sizeof need),
                                    wl_format_bytes((double)a->max_memory, max, sizeof max),
                                    what);
        }
    }

    mlb_meta("model", w->wl);
    mlb_meta("device", dev.cuda ? "cuda" : "cpu");
    mlb_meta("device_name", dev.name);
    w->describe(ctx, &dev);
    for (int p = 0; p < n_prec; p++) {
        int prec = precisions[p];
        if (w->check(ctx, &dev, prec))
            return 1;
        for (int s = 0; s < n_sizes; s++) {
            char stage[64], err[512];
            snprintf(stage, sizeof stage, "%s-%s%d", precision_names[prec], w->stage_tag,
                     sizes[s]);
            struct gemm_timing t;
            int rc = w->measure(ctx, &dev, prec, sizes[s], stage, &t, err, sizeof err);
            if (rc == -2)
                return wl_out_of_memory(w->wl, "%s: %s", stage, err);
            if (rc) {
                wl_error(w->wl, "%s: %s", stage, err);
                return 1;
            }
            w->report(ctx, prec, sizes[s], &t);
        }
    }
    return 0;
}
