/* nvtx-cost: what one NVTX event costs a program, through libmlbench_nvtx.so or without any
 * NVTX tool (bench/nvtx-cost.sh runs it both ways). The NVTX calls are the CUDA toolkit's
 * header-only NVTX v3, as in any annotated program; for reference, the same process also
 * times the C marker client called directly (mlb_stage_begin/end): the floor, one datagram
 * per event without NVTX, measured side by side under the same conditions.
 *
 * A first push/pop tells whether a tool is attached (push returns a level >= 0; NVTX without a
 * tool returns NVTX_NO_PUSH_POP_TRACKING): it prints `nvtx_injected 1` or `0`. Then, for each
 * case, it prints the wall time, user CPU and system CPU per event, in ns:
 *   <case>_ns_per_event N   <case>_user_ns_per_event N   <case>_sys_ns_per_event N
 * with <case>: nvtx_push_pop (nvtxRangePushA("step"), nvtxRangePop()), nvtx_mark (nvtxMarkA),
 * nvtx_domain (domain push/pop of a registered string, the cheapest NVTX idiom for a hot
 * loop), marker (mlb_stage_begin/end; a no-op outside mlbench).
 * Events: 100 000 pairs (or marks) per case with a tool, 10^7 without (about 1 ns each).
 * Usage: nvtx-cost [--pairs N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mlbench/marker.h"

#define WARMUP_PAIRS 1000

struct clocks {
    double wall_ns, user_ns, sys_ns;
};

static struct clocks clocks_now(void)
{
    struct timespec ts;
    struct rusage ru;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    getrusage(RUSAGE_SELF, &ru);
    return (struct clocks){
        (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec,
        (double)ru.ru_utime.tv_sec * 1e9 + (double)ru.ru_utime.tv_usec * 1e3,
        (double)ru.ru_stime.tv_sec * 1e9 + (double)ru.ru_stime.tv_usec * 1e3,
    };
}

static void report(const char *name, struct clocks t0, long events)
{
    struct clocks t1 = clocks_now();
    double n = (double)events;
    printf("%s_ns_per_event %.2f\n", name, (t1.wall_ns - t0.wall_ns) / n);
    printf("%s_user_ns_per_event %.2f\n", name, (t1.user_ns - t0.user_ns) / n);
    printf("%s_sys_ns_per_event %.2f\n", name, (t1.sys_ns - t0.sys_ns) / n);
}

int main(int argc, char **argv)
{
    long pairs = 0;
    if (argc == 3 && strcmp(argv[1], "--pairs") == 0) {
        char *end;
        errno = 0;
        pairs = strtol(argv[2], &end, 10);
        if (*end != '\0' || errno != 0 || pairs < 1 || pairs > 1000000000) {
            fprintf(stderr, "nvtx-cost: invalid --pairs value '%s': expected an integer from 1 "
                            "to 1000000000\n", argv[2]);
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: nvtx-cost [--pairs N]\n");
        return 2;
    }

    /* The first NVTX call loads the injection library, if one is named: not timed. */
    int injected = nvtxRangePushA("nvtx_cost_probe") >= 0;
    nvtxRangePop();
    printf("nvtx_injected %d\n", injected);
    if (pairs == 0)
        pairs = injected ? 100000 : 10000000;

    for (long i = 0; i < WARMUP_PAIRS; i++) {
        nvtxRangePushA("warmup");
        nvtxRangePop();
        mlb_stage_begin("warmup_marker");
        mlb_stage_end("warmup_marker");
    }

    struct clocks t0 = clocks_now();
    for (long i = 0; i < pairs; i++) {
        nvtxRangePushA("step");
        nvtxRangePop();
    }
    report("nvtx_push_pop", t0, 2 * pairs);

    t0 = clocks_now();
    for (long i = 0; i < pairs; i++)
        nvtxMarkA("tick");
    report("nvtx_mark", t0, pairs);

    nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = nvtxDomainRegisterStringA(domain, "step");
    t0 = clocks_now();
    for (long i = 0; i < pairs; i++) {
        nvtxDomainRangePushEx(domain, &attr);
        nvtxDomainRangePop(domain);
    }
    report("nvtx_domain", t0, 2 * pairs);
    nvtxDomainDestroy(domain);

    int failures = 0;
    t0 = clocks_now();
    for (long i = 0; i < pairs; i++) {
        failures += mlb_stage_begin("marker_step") != 0;
        failures += mlb_stage_end("marker_step") != 0;
    }
    report("marker", t0, 2 * pairs);
    if (failures != 0)
        fprintf(stderr, "nvtx-cost: %d marker sends failed\n", failures);
    return failures != 0;
}
