/* Unit tests of the rules that read NVML GPM's activities (src/analysis/analyze.c, stage_findings.c;
 * docs/analysis.md): a GPU "busy" with kernels that fill few SMs is under-occupied, not
 * gpu-bound; a bf16/fp16/tf32 run whose tensor pipes stay idle is told so; without GPM the
 * rules stay silent and the verdicts are those of utilisation alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../include/analyze_fixture.h"

/* A stage of one GPU busy `util` of the time with GPM's SM and tensor activities. */
static struct stage_resources gpm_stage(const char *name, double util, double sm, double tensor)
{
    struct stage_resources s = gpu_stage(name, 1.0, util);
    s.gpu_sm_active = sm;
    s.gpu_tensor_active = tensor;
    return s;
}

static void test_under_occupied(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = gpm_stage("train", 0.97, 0.20, NAN);
    s.gpu_sm_occupancy = 0.08;
    assert_string_equal(verdict1(&ctx, &s), "gpu-under-occupied");
    assert_contains(an.verdicts[0].evidence, "97 %");
    assert_contains(an.verdicts[0].evidence, "only 20 % of the SMs");
    assert_contains(an.verdicts[0].evidence, "occupancy 8 %");
    const struct finding *f = finding("gpu-under-occupied");
    assert_non_null(f);
    assert_contains(f->recommendation, "larger batch");
    /* the same work on kernels filling 80 % of the SMs: 1 s x (1 - 0.2 / 0.8) */
    assert_near(f->saving_ns, 0.75 * S);

    /* SMs well used: gpu-bound, with the activities in its evidence */
    s = gpm_stage("train", 0.97, 0.85, 0.40);
    s.gpu_dram_active = 0.62;
    assert_string_equal(verdict1(&ctx, &s), "gpu-bound");
    assert_contains(an.verdicts[0].evidence, "85 % of its SMs active");
    assert_contains(an.verdicts[0].evidence, "tensor pipes 40 %");
    assert_contains(an.verdicts[0].evidence, "DRAM bandwidth 62 %");
    /* DRAM activity (GPM) decides the memory-heavy advice over NVML's memory utilisation */
    assert_contains(finding("gpu-bound")->recommendation, "memory traffic is heavy");

    /* the boundary: 0.5 is not under-occupied */
    s = gpm_stage("train", 0.97, 0.50, NAN);
    assert_string_equal(verdict1(&ctx, &s), "gpu-bound");

    /* without GPM: utilisation alone, as before */
    s = gpm_stage("train", 0.97, NAN, NAN);
    assert_string_equal(verdict1(&ctx, &s), "gpu-bound");
    assert_lacks(an.verdicts[0].evidence, "SMs");

    /* a GPU not busy 90 % of the time is judged by the feed rules, whatever its SMs do */
    s = gpm_stage("train", 0.30, 0.10, NAN);
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");

    /* NVML not working: no GPU rule at all, even with figures present */
    ctx.gpu_measured = false;
    s = gpm_stage("train", 0.97, 0.20, NAN);
    assert_string_not_equal(verdict1(&ctx, &s), "gpu-under-occupied");
}

static void test_tensor_cores_idle(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.precision = "bf16";
    ctx.gpu_name = "NVIDIA H200";
    ctx.gpu_tensor_cores = true;
    struct stage_resources s = gpm_stage("train", 0.95, 0.70, 0.004);
    run1(&ctx, &s);
    const struct finding *f = finding("tensor-cores-idle");
    assert_non_null(f);
    assert_contains(f->evidence, "precision bf16");
    assert_contains(f->evidence, "0.4 %");
    assert_contains(f->evidence, "NVIDIA H200");
    assert_contains(f->recommendation, "autocast");
    assert_null(finding("mixed-precision")); /* it already asks for reduced precision */

    /* TF32: the advice is the switch that turns it on */
    ctx.precision = "tf32";
    run1(&ctx, &s);
    assert_non_null(f = finding("tensor-cores-idle"));
    assert_contains(f->recommendation, "allow_tf32");

    /* tensor pipes working: nothing to say */
    ctx.precision = "fp16";
    s = gpm_stage("train", 0.95, 0.70, 0.35);
    run1(&ctx, &s);
    assert_null(finding("tensor-cores-idle"));

    /* an fp32 run is the mixed-precision finding's, not this one's */
    ctx.precision = "fp32";
    s = gpm_stage("train", 0.95, 0.70, 0.0);
    run1(&ctx, &s);
    assert_null(finding("tensor-cores-idle"));
    assert_non_null(finding("mixed-precision"));

    /* SMs hardly working (a stage that only copies): too little to judge */
    ctx.precision = "bf16";
    s = gpm_stage("train", 0.95, 0.10, 0.0);
    run1(&ctx, &s);
    assert_null(finding("tensor-cores-idle"));

    /* without GPM, no tensor activity known: silent */
    s = gpm_stage("train", 0.95, NAN, NAN);
    run1(&ctx, &s);
    assert_null(finding("tensor-cores-idle"));

    /* a stage in which the GPU does not work */
    s = gpm_stage("load", 0.01, 0.30, 0.0);
    run1(&ctx, &s);
    assert_null(finding("tensor-cores-idle"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_under_occupied, teardown),
        cmocka_unit_test_teardown(test_tensor_cores_idle, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
