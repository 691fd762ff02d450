/* Unit tests of the GPM metrics of the nvml source (src/sources/nvml.c: SM, tensor, FP pipe and
 * DRAM activity, PCIe and NVLink rates from two GPM samples) and of the GPU facts that come with
 * them (sm_clock_max_hertz, gpm), against the fake NVML (tests/fakes/fake_nvml.c: directives gpm,
 * gpm_sample, gpm_<metric>, sm_clock_max). The fixture is tests/fakes/fake_nvml_fixture.h; its
 * ticks are stamped 100 ms apart, the interval GPM wants.
 *
 * Expected values are the scripted NVML answers converted by hand: percent / 100, MiB/s * 2^20,
 * MHz * 1e6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "fake_nvml_fixture.h"
#include "sources/sources.h"

#define N_BASE 12 /* the series of a GPU without GPM */
#define N_GPM 10  /* the GPM series */
#define MIB 1048576.0

static const char *const gpm_series[N_GPM] = {
    "gpu_graphics_active_ratio", "gpu_sm_active_ratio",    "gpu_sm_occupancy_ratio",
    "gpu_tensor_active_ratio",   "gpu_dram_active_ratio",  "gpu_fp64_active_ratio",
    "gpu_fp32_active_ratio",     "gpu_fp16_active_ratio",  "gpu_nvlink_rx_bytes_per_second",
    "gpu_nvlink_tx_bytes_per_second",
};

static void assert_gpm_nan(const struct fixture *fx, int gpu, size_t row)
{
    for (int s = 0; s < N_GPM; s++)
        assert_nan(fx, gpm_series[s], gpu, row);
}

/* No GPU with GPM (the fake's default, or NVML says not supported): no GPM series at all,
 * not null ones, no sample allocated, and the PCIe series come from nvmlDeviceGetPcieThroughput. */
static void test_gpm_absent(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 2\ngpm 1 ERR_NOT_SUPPORTED\npcie_rx 0 1\npcie_tx 0 2\n"
                        "gpm_sm 0 50\n");
    assert_int_equal(open_source(fx), 0);
    assert_int_equal(fx->reg.n, 2 * N_BASE);
    size_t row = tick(fx);
    for (int s = 0; s < N_GPM; s++)
        assert_true(sample_table_find(&fx->tab, gpm_series[s], NULL) < 0);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, row, 1024);
    assert_int_equal(fx->calls("nvmlGpmQueryDeviceSupport"), 2);
    assert_int_equal(fx->calls("nvmlGpmSampleAlloc"), 0);
    assert_int_equal(fx->calls("nvmlGpmSampleGet"), 0);
    assert_int_equal(fx->errors, 0);
}

static const char one_gpm_gpu[] =
    "gpm 0 1\n"
    "pcie_rx 0 7\npcie_tx 0 7\n" /* the blocking call's answers: must not be asked */
    "gpm_graphics 0 90 100\n"
    "gpm_sm 0 50 12.5 100.4\n" /* a little over 100 % reads 1 */
    "gpm_occupancy 0 25\n"
    "gpm_tensor 0 75 -1 nan 10\n" /* what no percentage can be: null */
    "gpm_dram 0 33.3\n"
    "gpm_fp64 0 0\n"
    "gpm_fp32 0 40\n"
    "gpm_fp16 0 60\n"
    "gpm_pcie_rx 0 1.5 0\n"
    "gpm_pcie_tx 0 1024\n"
    "gpm_nvlink_rx 0 2048\n"
    "gpm_nvlink_tx 0 0.25\n";

/* Each tick takes a sample; from the second, the metrics of the interval since the previous one,
 * in base units. PCIe comes from GPM: nvmlDeviceGetPcieThroughput is never called. */
static void test_gpm_values(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, one_gpm_gpu);
    assert_int_equal(open_source(fx), 0);
    assert_int_equal(fx->reg.n, N_BASE + N_GPM);
    for (int s = 0; s < N_GPM; s++) {
        assert_string_equal(fx->reg.defs[N_BASE + s].name, gpm_series[s]);
        assert_string_equal(fx->reg.defs[N_BASE + s].labels, "gpu=\"0\"");
        assert_int_equal(fx->reg.defs[N_BASE + s].kind, SERIES_GAUGE);
    }
    for (int i = 0; i < 5; i++)
        tick(fx);
    assert_int_equal(fx->errors, 0);

    /* The first tick has no interval yet. */
    assert_gpm_nan(fx, 0, 0);
    assert_nan(fx, "gpu_pcie_rx_bytes_per_second", 0, 0);
    assert_nan(fx, "gpu_pcie_tx_bytes_per_second", 0, 0);

    assert_value(fx, "gpu_graphics_active_ratio", 0, 1, 0.9);
    assert_value(fx, "gpu_graphics_active_ratio", 0, 2, 1.0);
    assert_value(fx, "gpu_sm_active_ratio", 0, 1, 0.5);
    assert_value(fx, "gpu_sm_active_ratio", 0, 2, 0.125);
    assert_value(fx, "gpu_sm_active_ratio", 0, 3, 1.0);
    assert_value(fx, "gpu_sm_active_ratio", 0, 4, 1.0); /* the last step repeated */
    assert_value(fx, "gpu_sm_occupancy_ratio", 0, 1, 0.25);
    assert_value(fx, "gpu_tensor_active_ratio", 0, 1, 0.75);
    assert_nan(fx, "gpu_tensor_active_ratio", 0, 2);
    assert_nan(fx, "gpu_tensor_active_ratio", 0, 3);
    assert_value(fx, "gpu_tensor_active_ratio", 0, 4, 0.1);
    assert_value(fx, "gpu_dram_active_ratio", 0, 1, 33.3 / 100.0);
    assert_value(fx, "gpu_fp64_active_ratio", 0, 1, 0); /* a real 0 */
    assert_value(fx, "gpu_fp32_active_ratio", 0, 1, 0.4);
    assert_value(fx, "gpu_fp16_active_ratio", 0, 1, 0.6);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, 1, 1.5 * MIB);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, 2, 0);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, 1, 1024 * MIB);
    assert_value(fx, "gpu_nvlink_rx_bytes_per_second", 0, 1, 2048 * MIB);
    assert_value(fx, "gpu_nvlink_tx_bytes_per_second", 0, 4, 0.25 * MIB);

    assert_int_equal(fx->calls("nvmlGpmSampleGet"), 5);
    assert_int_equal(fx->calls("nvmlGpmMetricsGet"), 4); /* all metrics at once */
    assert_int_equal(fx->calls("nvmlDeviceGetPcieThroughput"), 0);
    assert_int_equal(fx->calls("nvmlGpmSampleAlloc"), 2);

    close_source(fx);
    assert_int_equal(fx->calls("nvmlGpmSampleFree"), 2);
    assert_int_equal(fx->calls("nvmlShutdown"), 1);
}

/* A run starts without an interval: run_start forgets the previous sample. A tick less than
 * 90 ms after the previous sample takes none; the next one covers the whole span. A tick of a
 * 100 ms schedule that comes a few ms early still takes one. */
static void test_gpm_intervals(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "gpm 0 1\ngpm_sm 0 10 20 30 40\n");
    assert_int_equal(open_source(fx), 0);
    const int64_t ms = 1000000;
    size_t r0 = tick_at(fx, 1000 * ms), r1 = tick_at(fx, 1100 * ms);
    assert_nan(fx, "gpu_sm_active_ratio", 0, r0);
    assert_value(fx, "gpu_sm_active_ratio", 0, r1, 0.1);

    nvml_source.run_start(fx->state);
    size_t r2 = tick_at(fx, 1200 * ms), r3 = tick_at(fx, 1300 * ms);
    assert_nan(fx, "gpu_sm_active_ratio", 0, r2);
    assert_value(fx, "gpu_sm_active_ratio", 0, r3, 0.2);

    size_t r4 = tick_at(fx, 1310 * ms), r5 = tick_at(fx, 1389 * ms); /* too soon */
    size_t r6 = tick_at(fx, 1400 * ms), r7 = tick_at(fx, 1495 * ms);
    assert_nan(fx, "gpu_sm_active_ratio", 0, r4);
    assert_nan(fx, "gpu_sm_active_ratio", 0, r5);
    assert_value(fx, "gpu_sm_active_ratio", 0, r6, 0.3);
    assert_value(fx, "gpu_sm_active_ratio", 0, r7, 0.4);
    assert_int_equal(fx->calls("nvmlGpmSampleGet"), 6);
    assert_int_equal(fx->calls("nvmlGpmMetricsGet"), 4);
    assert_int_equal(fx->errors, 0);
}

/* A metric NVML does not support (NVLink on a PCIe card; no script in the fake) stays null
 * without an error and is not asked again; another per-metric error counts one. Without GPM
 * PCIe rates, the PCIe series come from nvmlDeviceGetPcieThroughput again. */
static void test_gpm_metric_errors(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "gpm 0 1\ngpm_sm 0 50\ngpm_nvlink_rx 0 ERR_NOT_SUPPORTED\n"
                        "gpm_dram 0 ERR_UNKNOWN 40\npcie_rx 0 5\npcie_tx 0 6\n");
    assert_int_equal(open_source(fx), 0);
    size_t r0 = tick(fx), r1 = tick(fx), r2 = tick(fx);
    assert_int_equal(fx->errors, 1);
    assert_value(fx, "gpu_sm_active_ratio", 0, r1, 0.5);
    assert_nan(fx, "gpu_dram_active_ratio", 0, r1);
    assert_value(fx, "gpu_dram_active_ratio", 0, r2, 0.4);
    for (size_t row = r0; row <= r2; row++) {
        assert_nan(fx, "gpu_nvlink_rx_bytes_per_second", 0, row);
        assert_nan(fx, "gpu_nvlink_tx_bytes_per_second", 0, row);
        assert_nan(fx, "gpu_tensor_active_ratio", 0, row);
    }
    /* GPM said at r1 that it has no PCIe rates: from then on the blocking call. */
    assert_nan(fx, "gpu_pcie_rx_bytes_per_second", 0, r0);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, r1, 5 * 1024);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, r2, 6 * 1024);
    assert_int_equal(fx->calls("nvmlDeviceGetPcieThroughput"), 4);
}

/* A failed sample: one error, that tick null, the previous sample kept for the next tick.
 * NOT_SUPPORTED: GPM stops on that GPU, without an error. A lost GPU: one error, nothing more. */
static void test_gpm_sample_errors(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 3\n"
                        "gpm 0 1\ngpm_sample 0 OK ERR_UNKNOWN OK\ngpm_sm 0 10 20\n"
                        "gpm 1 1\ngpm_sample 1 OK ERR_NOT_SUPPORTED\ngpm_sm 1 30\n"
                        "pcie_rx 1 1\npcie_tx 1 1\n"
                        "gpm 2 1\ngpm_sample 2 OK LOST\ngpm_sm 2 50\n");
    assert_int_equal(open_source(fx), 0);
    size_t r0 = tick(fx), r1 = tick(fx), r2 = tick(fx), r3 = tick(fx);
    assert_int_equal(fx->errors, 2); /* GPU 0's failed sample, GPU 2 lost */
    assert_nan(fx, "gpu_sm_active_ratio", 0, r0);
    assert_nan(fx, "gpu_sm_active_ratio", 0, r1);
    assert_value(fx, "gpu_sm_active_ratio", 0, r2, 0.1); /* from r0's sample to r2's */
    assert_value(fx, "gpu_sm_active_ratio", 0, r3, 0.2);
    for (size_t row = r0; row <= r3; row++) {
        assert_nan(fx, "gpu_sm_active_ratio", 1, row);
        assert_nan(fx, "gpu_sm_active_ratio", 2, row);
    }
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 1, r2, 1024); /* GPM gone: blocking call */
    /* GPU 0 at every tick; GPU 1 twice (then not supported); GPU 2 twice (then lost). */
    assert_int_equal(fx->calls("nvmlGpmSampleGet"), 4 + 2 + 2);
}

/* One GPU with GPM, one without: both have every series, the second's GPM ones null and its
 * PCIe read the blocking way; nvmlDeviceGetPcieThroughput is asked of it alone. */
static void test_gpm_mixed_gpus(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 2\ngpm 0 1\ngpm_sm 0 80\ngpm_pcie_rx 0 2\ngpm_pcie_tx 0 3\n"
                        "pcie_rx 1 4\npcie_tx 1 5\ngpm_sm 1 99\n");
    assert_int_equal(open_source(fx), 0);
    assert_int_equal(fx->reg.n, 2 * (N_BASE + N_GPM));
    size_t r0 = tick(fx), r1 = tick(fx), r2 = tick(fx);
    assert_value(fx, "gpu_sm_active_ratio", 0, r1, 0.8);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, r2, 2 * MIB);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, r2, 3 * MIB);
    for (size_t row = r0; row <= r2; row++) {
        assert_gpm_nan(fx, 1, row);
        assert_value(fx, "gpu_pcie_rx_bytes_per_second", 1, row, 4 * 1024);
    }
    assert_int_equal(fx->calls("nvmlDeviceGetPcieThroughput"), 3 * 2);
    assert_int_equal(fx->calls("nvmlGpmSampleAlloc"), 2);
    assert_int_equal(fx->errors, 0);
    struct source_facts d = source_facts_of(fx);
    assert_true(d.gpus[0].gpm);
    assert_false(d.gpus[1].gpm);
    source_facts_free(&d);
    close_source(fx);
    assert_int_equal(fx->calls("nvmlGpmSampleFree"), 2);
}

/* An old driver's library has no GPM functions: no GPM series, gpm false; the maximum clock is
 * an old function and is there. */
static void test_gpm_minimal_library(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, true, "gpm 0 1\ngpm_sm 0 50\nsm_clock_max 0 1755\nutil 0 10/10\n");
    assert_int_equal(open_source(fx), 0);
    assert_int_equal(fx->reg.n, N_BASE);
    size_t row = tick(fx);
    tick(fx);
    assert_value(fx, "gpu_utilization_ratio", 0, row, 0.1);
    assert_true(sample_table_find(&fx->tab, "gpu_sm_active_ratio", NULL) < 0);
    assert_null(dlsym(fx->fake, "nvmlGpmSampleGet"));
    struct source_facts d = source_facts_of(fx);
    assert_false(d.gpus[0].gpm);
    assert_true(d.gpus[0].sm_clock_max_hertz == 1755000000.0);
    source_facts_free(&d);
    assert_int_equal(fx->errors, 0);
}

/* The facts: the maximum SM clock in Hz (NAN when unknown) and whether GPM is sampled (unknown,
 * like every other fact, for a GPU without a handle; the environment leaves both out). */
static void test_gpm_facts(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 4\ngpm 0 1\nsm_clock_max 0 1980\n"
                        "sm_clock_max 1 ERR_UNKNOWN\ngpm 1 ERR_UNKNOWN\n"
                        "handle 2 ERR_NO_PERMISSION\ngpm 2 1\n"
                        "sm_clock_max 3 0\n");
    assert_int_equal(open_source(fx), 0);
    struct source_facts d = source_facts_of(fx);
    const struct gpu_facts *g = &d.gpus[0];
    assert_true(g->sm_clock_max_hertz == 1980000000.0);
    assert_true(g->gpm);
    g = &d.gpus[1];
    assert_true(isnan(g->sm_clock_max_hertz));
    assert_false(g->gpm);
    g = &d.gpus[2];
    assert_false(g->usable);
    assert_false(g->gpm); /* not usable: the environment leaves gpm out */
    assert_true(isnan(g->sm_clock_max_hertz));
    assert_true(isnan(d.gpus[3].sm_clock_max_hertz)); /* 0: unknown */
    source_facts_free(&d);
    /* GPU 0 has GPM: every GPU has the series, the unusable one too (null). */
    assert_int_equal(fx->reg.n, 4 * (N_BASE + N_GPM));
    size_t row = tick(fx);
    assert_gpm_nan(fx, 2, row);
    close_source(fx);
    assert_int_equal(fx->calls("nvmlGpmSampleAlloc"), 2);
    assert_int_equal(fx->calls("nvmlGpmSampleFree"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gpm_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_intervals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_metric_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_sample_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_mixed_gpus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_minimal_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_facts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
