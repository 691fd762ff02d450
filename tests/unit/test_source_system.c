/* Unit tests of src/sources/system.c (host-wide CPU, memory, swap, disk, network and pressure),
 * against two scripted snapshots of a fake /proc (and a fake /sys/block) written into temporary
 * directories with tests/fakes/proc/fake_fs.h, and once against the real /proc.
 *
 * Expected values are worked out by hand in the comments; page_size is 4096 in the fake runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../fakes/proc/fake_fs.h"
#include "measure/sampler.h"
#include "sources/sources.h"

#define TOL 1e-12

/* cpu: user nice system idle iowait irq softirq steal guest guest_nice */
static const char stat_1[] =
    "cpu  1000 100 500 8000 200 10 20 5 300 0\n"
    "cpu0 500 50 250 4000 100 5 10 3 150 0\n"
    "cpu1 500 50 250 4000 100 5 10 2 150 0\n"
    "intr 123456 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "ctxt 987654\nbtime 1700000000\nprocesses 4321\nprocs_running 2\nprocs_blocked 0\n"
    "softirq 55555 0 1 2 3 4 5 6 7 8 9\n";
/* Deltas, all: user 100, system 60, idle 200, iowait 40, softirq 5, steal 20 (guest +60 is
 *   inside user): total 425, busy 425 - 200 - 40 = 185 (steal counts as busy), iowait 40,
 *   steal 20.
 * cpu0: user 80, system 30: total 110, busy 110 (ratio 1).
 * cpu1: user 20, system 30, idle 200, iowait 40, softirq 5, steal 20: total 315, busy 75. */
static const char stat_2[] =
    "cpu  1100 100 560 8200 240 10 25 25 360 0\n"
    "cpu0 580 50 280 4000 100 5 10 3 200 0\n"
    "cpu1 520 50 280 4200 140 5 15 22 160 0\n"
    "intr 123999 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "ctxt 987999\nbtime 1700000000\nprocesses 4330\nprocs_running 1\nprocs_blocked 1\n"
    "softirq 55999 0 1 2 3 4 5 6 7 8 9\n";

static const char meminfo_fmt[] =
    "MemTotal:       16000000 kB\nMemFree:         %u kB\nMemAvailable:    %u kB\n"
    "Buffers:          100000 kB\nCached:          3000000 kB\nSwapCached:            0 kB\n"
    "SwapTotal:       2000000 kB\nSwapFree:        2000000 kB\n";

static const char vmstat_fmt[] =
    "nr_free_pages 250000\nnr_zone_inactive_anon 1000\npgpgin 123\npgpgout 456\n"
    "pswpin %u\npswpout %u\npgalloc_dma 0\n";

/* major minor name reads merged sectors_read ms writes merged sectors_written ... (17 fields).
 * Counted: vda, sda, nvme0n1 (whole disks at the bottom of the stack). Not: vda1, sda2,
 * nvme0n1p1 (partitions), dm-0 (stacked on sda2), md0 (RAID on vda1), loop0, ram0, zram0,
 * nvme0c0n1 (a multipath path of nvme0n1).
 * tick 1: read sectors 1000 + 100 + 400 = 1500, written 2000 + 200 + 800 = 3000. */
static const char diskstats_1[] =
    " 253       0 vda 100 0 1000 50 50 0 2000 60 0 100 110 0 0 0 0 0 0\n"
    " 253       1 vda1 90 0 900 40 40 0 1800 50 0 90 90 0 0 0 0 0 0\n"
    "   8       0 sda 10 0 100 5 5 0 200 6 0 10 11 0 0 0 0 0 0\n"
    "   8       2 sda2 9 0 90 5 5 0 190 6 0 10 11 0 0 0 0 0 0\n"
    " 254       0 dm-0 5 0 50 1 3 0 60 2 0 3 3 0 0 0 0 0 0\n"
    "   9       0 md0 7 0 70 1 3 0 70 2 0 3 3 0 0 0 0 0 0\n"
    "   7       0 loop0 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 252       0 zram0 40 0 320 1 30 0 240 1 0 2 2 0 0 0 0 0 0\n"
    " 259       0 nvme0n1 30 0 400 10 20 0 800 10 0 20 20 0 0 0 0 0 0\n"
    " 259       1 nvme0n1p1 29 0 390 10 19 0 790 10 0 20 20 0 0 0 0 0 0\n"
    " 259       2 nvme0c0n1 30 0 400 10 20 0 800 10 0 20 20 0 0 0 0 0 0\n";
/* tick 2: vda read +500 written +500, sda unchanged, nvme0n1 removed (adds nothing more),
 * everything else changes but is not counted: read 2000 sectors, written 3500. */
static const char diskstats_2[] =
    " 253       0 vda 150 0 1500 50 60 0 2500 60 0 100 110 0 0 0 0 0 0\n"
    " 253       1 vda1 140 0 1400 40 50 0 2300 50 0 90 90 0 0 0 0 0 0\n"
    "   8       0 sda 10 0 100 5 5 0 200 6 0 10 11 0 0 0 0 0 0\n"
    "   8       2 sda2 9 0 90 5 5 0 190 6 0 10 11 0 0 0 0 0 0\n"
    " 254       0 dm-0 50 0 5000 1 30 0 6000 2 0 3 3 0 0 0 0 0 0\n"
    "   9       0 md0 70 0 7000 1 30 0 7000 2 0 3 3 0 0 0 0 0 0\n"
    "   7       0 loop0 10 0 80000 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 252       0 zram0 400 0 32000 1 300 0 24000 1 0 2 2 0 0 0 0 0 0\n";

/* Counted: eth0 and wlan0 (old format, no blank after the colon), not lo.
 * tick 1: receive 1000 + 300 = 1300, transmit 2000 + 400 = 2400. */
static const char netdev_1[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:    5000      50    0    0    0     0          0         0     5000      50    0 "
    "   0    0     0       0          0\n"
    "  eth0:    1000      10    0    0    0     0          0         0     2000      20    0 "
    "   0    0     0       0          0\n"
    " wlan0:300 3 0 0 0 0 0 0 400 4 0 0 0 0 0 0\n";
/* tick 2: eth0 +500 / +600; wlan0 re-created (counters back to 10 and 20: adds its whole new
 * values); lo +99999 not counted: receive 1300 + 500 + 10 = 1810, transmit 2400 + 600 + 20 = 3020. */
static const char netdev_2[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:  104999      50    0    0    0     0          0         0   104999      50    0 "
    "   0    0     0       0          0\n"
    "  eth0:    1500      10    0    0    0     0          0         0     2600      20    0 "
    "   0    0     0       0          0\n"
    " wlan0:10 3 0 0 0 0 0 0 20 4 0 0 0 0 0 0\n";

static const char psi_fmt[] = "some avg10=1.00 avg60=0.50 avg300=0.10 total=%u\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=%u\n";

static void write_snapshot(const char *root, int which)
{
    fake_write(root, "stat", "%s", which == 1 ? stat_1 : stat_2);
    fake_write(root, "meminfo", meminfo_fmt, 500000u, which == 1 ? 1000000u : 900000u);
    fake_write(root, "vmstat", vmstat_fmt, which == 1 ? 10u : 15u, which == 1 ? 20u : 30u);
    fake_write(root, "diskstats", "%s", which == 1 ? diskstats_1 : diskstats_2);
    fake_write(root, "net/dev", "%s", which == 1 ? netdev_1 : netdev_2);
    fake_write(root, "pressure/cpu", psi_fmt, which == 1 ? 1500000u : 1750000u, 0u);
    fake_write(root, "pressure/io", psi_fmt, which == 1 ? 2000000u : 2100000u,
               which == 1 ? 1000000u : 1000500u);
    fake_write(root, "pressure/memory", psi_fmt, which == 1 ? 500u : 700u, which == 1 ? 250u : 300u);
}

/* /sys/block as the kernel has it: whole disks only, with slaves/ for stacked devices. */
static void write_sys_block(const char *sys)
{
    const char *disks[] = {"vda",  "sda",  "nvme0n1", "nvme0c0n1", "loop0",
                           "ram0", "zram0", "dm-0",   "md0"};
    for (size_t i = 0; i < sizeof disks / sizeof *disks; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "block/%s/slaves", disks[i]);
        fake_mkdir(sys, rel);
    }
    fake_mkdir(sys, "block/dm-0/slaves/sda2");
    fake_mkdir(sys, "block/md0/slaves/vda1");
}

struct fixture {
    char *root, *sys;
    struct series_registry reg;
    struct sample_ctx ctx;
    void *state;
    struct sample_table tab;
    uint64_t errors;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->root = fake_root_new();
    fx->sys = fake_root_new();
    write_snapshot(fx->root, 1);
    write_sys_block(fx->sys);
    assert_int_equal(setenv("MLBENCH_SYS_ROOT", fx->sys, 1), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    if (fx->state)
        system_source.close(fx->state);
    sample_table_free(&fx->tab);
    series_registry_free(&fx->reg);
    fake_root_free(fx->root);
    fake_root_free(fx->sys);
    unsetenv("MLBENCH_SYS_ROOT");
    free(fx);
    return 0;
}

static void fixture_open(struct fixture *fx)
{
    fx->ctx.proc_root = fx->root ? fx->root : "/proc";
    fx->ctx.page_size = fx->root ? 4096 : sysconf(_SC_PAGESIZE);
    fx->ctx.ticks_per_s = 100;
    char err[256] = "";
    assert_int_equal(system_source.open(&fx->reg, &fx->ctx, &fx->state, err, sizeof err), 0);
    assert_string_equal(err, "");
    sample_table_init(&fx->tab, &fx->reg);
    system_source.run_start(fx->state);
}

static size_t tick(struct fixture *fx)
{
    size_t row = sample_table_add_row(&fx->tab, (int64_t)fx->tab.n * 100000000);
    system_source.sample(fx->state, &fx->ctx, &fx->tab, row, &fx->errors);
    return row;
}

static double value(const struct fixture *fx, const char *name, const char *labels, size_t row)
{
    long s = sample_table_find(&fx->tab, name, labels);
    if (s < 0) {
        print_error("series %s{%s} not registered\n", name, labels);
        fail();
    }
    return fx->tab.v[s][row];
}

#define assert_value(fx, name, labels, row, expected)                                          \
    do {                                                                                       \
        double got_ = value(fx, name, labels, row), want_ = (expected);                       \
        if (!(fabs(got_ - want_) <= TOL * fmax(1.0, fabs(want_)))) {                           \
            print_error("%s{%s} at row %zu = %.17g, expected %.17g\n", name, labels,           \
                        (size_t)(row), got_, want_);                                           \
            fail();                                                                            \
        }                                                                                      \
    } while (0)

#define assert_nan(fx, name, labels, row) assert_true(isnan(value(fx, name, labels, row)))

static void test_registers_series(void **state)
{
    struct fixture *fx = *state;
    fixture_open(fx);
    const char *gauges[] = {"system_cpu_busy_ratio", "system_cpu_iowait_ratio",
                            "system_cpu_steal_ratio", "system_memory_available_bytes",
                            "system_procs_running"};
    const char *counters[] = {"system_swap_in_bytes_total",
                              "system_swap_out_bytes_total",
                              "system_disk_read_bytes_total",
                              "system_disk_written_bytes_total",
                              "system_network_receive_bytes_total",
                              "system_network_transmit_bytes_total",
                              "system_pressure_cpu_some_seconds_total",
                              "system_pressure_cpu_full_seconds_total",
                              "system_pressure_io_some_seconds_total",
                              "system_pressure_io_full_seconds_total",
                              "system_pressure_memory_some_seconds_total",
                              "system_pressure_memory_full_seconds_total"};
    for (size_t i = 0; i < sizeof gauges / sizeof *gauges; i++) {
        long s = sample_table_find(&fx->tab, gauges[i], "");
        assert_true(s >= 0);
        assert_int_equal(fx->reg.defs[s].kind, SERIES_GAUGE);
    }
    for (size_t i = 0; i < sizeof counters / sizeof *counters; i++) {
        long s = sample_table_find(&fx->tab, counters[i], "");
        assert_true(s >= 0);
        assert_int_equal(fx->reg.defs[s].kind, SERIES_COUNTER);
        assert_string_equal(fx->reg.defs[s].source, "system");
    }
    assert_true(sample_table_find(&fx->tab, "system_cpu_core_busy_ratio", "cpu=\"0\"") >= 0);
    assert_true(sample_table_find(&fx->tab, "system_cpu_core_busy_ratio", "cpu=\"1\"") >= 0);
    assert_int_equal(fx->reg.n, 5 + 12 + 2);
}

/* Two snapshots: the exact ratios and totals (derivations next to the snapshots above). */
static void test_two_snapshots(void **state)
{
    struct fixture *fx = *state;
    fixture_open(fx);
    size_t row = tick(fx);
    /* The first tick of a run has no interval: no ratio. */
    assert_nan(fx, "system_cpu_busy_ratio", "", row);
    assert_nan(fx, "system_cpu_iowait_ratio", "", row);
    assert_nan(fx, "system_cpu_steal_ratio", "", row);
    assert_nan(fx, "system_cpu_core_busy_ratio", "cpu=\"0\"", row);
    assert_value(fx, "system_memory_available_bytes", "", row, 1000000.0 * 1024);
    assert_value(fx, "system_procs_running", "", row, 2); /* a gauge: from the first tick */
    assert_value(fx, "system_swap_in_bytes_total", "", row, 10.0 * 4096);
    assert_value(fx, "system_swap_out_bytes_total", "", row, 20.0 * 4096);
    assert_value(fx, "system_disk_read_bytes_total", "", row, 1500.0 * 512);
    assert_value(fx, "system_disk_written_bytes_total", "", row, 3000.0 * 512);
    assert_value(fx, "system_network_receive_bytes_total", "", row, 1300);
    assert_value(fx, "system_network_transmit_bytes_total", "", row, 2400);
    assert_value(fx, "system_pressure_cpu_some_seconds_total", "", row, 1.5);
    assert_value(fx, "system_pressure_cpu_full_seconds_total", "", row, 0);
    assert_value(fx, "system_pressure_io_some_seconds_total", "", row, 2.0);
    assert_value(fx, "system_pressure_io_full_seconds_total", "", row, 1.0);
    assert_value(fx, "system_pressure_memory_some_seconds_total", "", row, 0.0005);
    assert_value(fx, "system_pressure_memory_full_seconds_total", "", row, 0.00025);

    write_snapshot(fx->root, 2);
    row = tick(fx);
    assert_value(fx, "system_cpu_busy_ratio", "", row, 185.0 / 425);
    assert_value(fx, "system_cpu_iowait_ratio", "", row, 40.0 / 425);
    assert_value(fx, "system_cpu_steal_ratio", "", row, 20.0 / 425);
    assert_value(fx, "system_cpu_core_busy_ratio", "cpu=\"0\"", row, 1.0);
    assert_value(fx, "system_cpu_core_busy_ratio", "cpu=\"1\"", row, 75.0 / 315);
    assert_value(fx, "system_memory_available_bytes", "", row, 900000.0 * 1024);
    assert_value(fx, "system_procs_running", "", row, 1);
    assert_value(fx, "system_swap_in_bytes_total", "", row, 15.0 * 4096);
    assert_value(fx, "system_swap_out_bytes_total", "", row, 30.0 * 4096);
    assert_value(fx, "system_disk_read_bytes_total", "", row, 2000.0 * 512);
    assert_value(fx, "system_disk_written_bytes_total", "", row, 3500.0 * 512);
    assert_value(fx, "system_network_receive_bytes_total", "", row, 1810);
    assert_value(fx, "system_network_transmit_bytes_total", "", row, 3020);
    assert_value(fx, "system_pressure_cpu_some_seconds_total", "", row, 1.75);
    assert_value(fx, "system_pressure_io_some_seconds_total", "", row, 2.1);
    assert_value(fx, "system_pressure_io_full_seconds_total", "", row, 1.0005);
    assert_value(fx, "system_pressure_memory_some_seconds_total", "", row, 0.0007);
    assert_value(fx, "system_pressure_memory_full_seconds_total", "", row, 0.0003);
    assert_int_equal(fx->errors, 0);

    /* No clock tick elapsed: no ratio, and the next tick measures from the last change. */
    row = tick(fx);
    assert_nan(fx, "system_cpu_busy_ratio", "", row);
    assert_nan(fx, "system_cpu_core_busy_ratio", "cpu=\"0\"", row);
    assert_int_equal(fx->errors, 0);

    /* A new run starts without an interval again, and from the devices present now:
     * vda 1500 + sda 100 sectors read. */
    system_source.run_start(fx->state);
    row = tick(fx);
    assert_nan(fx, "system_cpu_busy_ratio", "", row);
    assert_value(fx, "system_disk_read_bytes_total", "", row, 1600.0 * 512);
}

/* Without /sys/block the same disks are counted, told apart by their names. */
static void test_disks_without_sys(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(setenv("MLBENCH_SYS_ROOT", "/nonexistent", 1), 0);
    fixture_open(fx);
    size_t row = tick(fx);
    assert_value(fx, "system_disk_read_bytes_total", "", row, 1500.0 * 512);
    assert_value(fx, "system_disk_written_bytes_total", "", row, 3000.0 * 512);
    write_snapshot(fx->root, 2);
    row = tick(fx);
    assert_value(fx, "system_disk_read_bytes_total", "", row, 2000.0 * 512);
    assert_value(fx, "system_disk_written_bytes_total", "", row, 3500.0 * 512);
}

/* No pressure directory (kernel without PSI): no pressure series; a cpu file with only "some"
 * (kernels before 5.13): only that one. */
static void test_pressure_absent(void **state)
{
    struct fixture *fx = *state;
    fake_remove(fx->root, "pressure");
    fixture_open(fx);
    for (size_t i = 0; i < fx->reg.n; i++)
        assert_null(strstr(fx->reg.defs[i].name, "pressure"));
    tick(fx);
    assert_int_equal(fx->errors, 0);

    system_source.close(fx->state);
    fx->state = NULL;
    sample_table_free(&fx->tab);
    series_registry_free(&fx->reg);
    fake_write(fx->root, "pressure/cpu", "%s",
               "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n");
    fixture_open(fx);
    size_t row = tick(fx);
    assert_value(fx, "system_pressure_cpu_some_seconds_total", "", row, 42e-6);
    assert_true(sample_table_find(&fx->tab, "system_pressure_cpu_full_seconds_total", "") < 0);
    assert_true(sample_table_find(&fx->tab, "system_pressure_io_some_seconds_total", "") < 0);
}

/* Files that are missing at open: their series are not registered. Without /proc/stat the source
 * cannot open. */
static void test_missing_files(void **state)
{
    struct fixture *fx = *state;
    fake_remove(fx->root, "vmstat");
    fake_remove(fx->root, "net");
    fake_write(fx->root, "meminfo", "%s", "MemTotal: 1000 kB\nMemFree: 10 kB\n"); /* before 3.14 */
    fixture_open(fx);
    assert_true(sample_table_find(&fx->tab, "system_swap_in_bytes_total", "") < 0);
    assert_true(sample_table_find(&fx->tab, "system_network_receive_bytes_total", "") < 0);
    assert_true(sample_table_find(&fx->tab, "system_memory_available_bytes", "") < 0);
    assert_true(sample_table_find(&fx->tab, "system_disk_read_bytes_total", "") >= 0);
    tick(fx);
    assert_int_equal(fx->errors, 0);

    fake_remove(fx->root, "stat");
    struct series_registry reg = {0};
    void *st = NULL;
    char err[256] = "";
    assert_int_equal(system_source.open(&reg, &fx->ctx, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "/stat"));
    assert_int_equal(reg.n, 0);
}

/* Files that become unreadable (here: empty or garbage, as a descriptor kept open cannot lose its
 * permission) count one error each and leave their series NAN, never 0; the others are read.
 * pressure/memory keeps a "some" line without total= and a "full" one with a bad total. */
static void test_unreadable_files(void **state)
{
    struct fixture *fx = *state;
    fixture_open(fx);
    tick(fx);
    write_snapshot(fx->root, 2);
    fake_write(fx->root, "meminfo", "%s", "");
    fake_write(fx->root, "stat", "%s", "garbage\n");
    fake_write(fx->root, "diskstats", "%s", "");
    fake_write(fx->root, "net/dev", "%s", "Inter-|\n face |\n");
    fake_write(fx->root, "pressure/io", "%s", "");
    fake_write(fx->root, "pressure/memory", "%s", "some avg10=0.00\nfull total=x\n");
    size_t row = tick(fx);
    assert_int_equal(fx->errors, 6);
    assert_nan(fx, "system_memory_available_bytes", "", row);
    assert_nan(fx, "system_cpu_busy_ratio", "", row);
    assert_nan(fx, "system_cpu_core_busy_ratio", "cpu=\"1\"", row);
    assert_nan(fx, "system_disk_read_bytes_total", "", row);
    assert_nan(fx, "system_network_receive_bytes_total", "", row);
    assert_nan(fx, "system_pressure_io_some_seconds_total", "", row);
    assert_nan(fx, "system_pressure_io_full_seconds_total", "", row);
    assert_nan(fx, "system_pressure_memory_some_seconds_total", "", row);
    assert_value(fx, "system_swap_in_bytes_total", "", row, 15.0 * 4096);
    assert_value(fx, "system_pressure_cpu_some_seconds_total", "", row, 1.75);

    /* Readable again: the device counters go on from where they were, with no jump. */
    write_snapshot(fx->root, 2);
    row = tick(fx);
    assert_value(fx, "system_network_receive_bytes_total", "", row, 1810);
    assert_value(fx, "system_disk_read_bytes_total", "", row, 2000.0 * 512);
    assert_value(fx, "system_cpu_busy_ratio", "", row, 185.0 / 425);
}

/* The real /proc and /sys: values finite and plausible. */
static void test_real_proc(void **state)
{
    struct fixture *fx = *state;
    fake_root_free(fx->root);
    fx->root = NULL;
    unsetenv("MLBENCH_SYS_ROOT");
    fixture_open(fx);
    tick(fx);
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    size_t row = tick(fx);
    assert_int_equal(fx->errors, 0);
    double busy = value(fx, "system_cpu_busy_ratio", "", row);
    assert_true(isnan(busy) || (busy >= 0 && busy <= 1));
    double avail = value(fx, "system_memory_available_bytes", "", row);
    assert_true(isfinite(avail) && avail > 0);
    for (size_t s = 0; s < fx->tab.n_series; s++) {
        double v = fx->tab.v[s][row];
        if (fx->reg.defs[s].kind == SERIES_COUNTER)
            assert_true(isfinite(v) && v >= 0);
    }
    enum { N_TICKS = 200 };
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < N_TICKS; i++)
        tick(fx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                N_TICKS / 1e3;
    print_message("system sample() with %zu series: %.0f us\n", fx->tab.n_series, us);
    assert_int_equal(fx->errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registers_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_snapshots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disks_without_sys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pressure_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_proc, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
