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
            if (w->measure(ctx, &dev, prec, sizes[s], stage, &t, err, sizeof err)) {
                wl_error(w->wl, "%s: %s", stage, err);
                return 1;
            }
            w->report(ctx, prec, sizes[s], &t);
        }
    }
    return 0;
}
