/* Unit tests of the Prometheus exposition: the text format writer (escaping, HELP/TYPE,
 * values, cumulative histogram buckets with +Inf, _sum and _count), the exposition of live
 * aggregates (one block per family, promtool's verdict when promtool is installed), and the
 * listen address parser of the HTTP server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "live/http_server.h"
#include "live/live.h"
#include "live/prometheus.h"

static void test_values(void **state)
{
    (void)state;
    char b[40];
    assert_string_equal(prom_format_value(0, b, sizeof b), "0");
    assert_string_equal(prom_format_value(42, b, sizeof b), "42");
    assert_string_equal(prom_format_value(0.1, b, sizeof b), "0.1");
    assert_string_equal(prom_format_value(-2.5, b, sizeof b), "-2.5");
    assert_string_equal(prom_format_value(1e-9, b, sizeof b), "1e-09");
    assert_string_equal(prom_format_value(1.5e300, b, sizeof b), "1.5e+300");
    assert_string_equal(prom_format_value(23820910592.0, b, sizeof b), "23820910592");
    assert_string_equal(prom_format_value(NAN, b, sizeof b), "NaN");
    assert_string_equal(prom_format_value(INFINITY, b, sizeof b), "+Inf");
    assert_string_equal(prom_format_value(-INFINITY, b, sizeof b), "-Inf");
    /* Every finite value reads back exactly. */
    double tricky[] = {1.0 / 3, 0.016129032258064516, 224.24699999999999, 5e-324, 1.7976931348623157e308};
    for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++)
        assert_true(strtod(prom_format_value(tricky[i], b, sizeof b), NULL) == tricky[i]);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(prom_valid_name("mlbench_gpu_utilization_ratio"));
    assert_true(prom_valid_name("a:b_c9"));
    assert_false(prom_valid_name("9lives"));
    assert_false(prom_valid_name("with-dash"));
    assert_false(prom_valid_name(""));
    assert_true(prom_valid_label_name("stage"));
    assert_false(prom_valid_label_name("__name__"));
    assert_false(prom_valid_label_name("a:b"));
}

static void test_escaping(void **state)
{
    (void)state;
    struct strbuf lb = STRBUF_INIT;
    prom_labels_add(&lb, "stage", "a\\b\"c\nd");
    assert_string_equal(lb.s, "stage=\"a\\\\b\\\"c\\nd\"");
    prom_labels_add(&lb, "name", "\xc3\xa9t\xc3\xa9");
    assert_string_equal(lb.s, "stage=\"a\\\\b\\\"c\\nd\",name=\"\xc3\xa9t\xc3\xa9\"");
    strbuf_reset(&lb);
    assert_int_equal(lb.len, 0);
    /* Bytes that are not UTF-8 become '?': a scraper would reject the whole exposition. */
    prom_labels_add(&lb, "v", "a\xff" "b\xe2\x82");
    assert_string_equal(lb.s, "v=\"a?b??\"");
    strbuf_free(&lb);

    struct strbuf b = STRBUF_INIT;
    prom_family(&b, "x_total", PROM_COUNTER, "line one\nback\\slash \"quotes\" stay");
    assert_string_equal(b.s, "# HELP x_total line one\\nback\\\\slash \"quotes\" stay\n"
                             "# TYPE x_total counter\n");
    strbuf_reset(&b);
    /* HELP stays UTF-8 too (fuzz_prometheus) */
    prom_family(&b, "u", PROM_GAUGE, "\xe2\x82\xac a\xff" "b\xe2\x82");
    assert_string_equal(b.s, "# HELP u \xe2\x82\xac a?b??\n# TYPE u gauge\n");
    strbuf_reset(&b);
    prom_family(&b, "g", PROM_GAUGE, "h");
    prom_sample(&b, "g", NULL, 1.5);
    prom_sample(&b, "g", "", 2);
    prom_sample(&b, "g", "gpu=\"0\"", NAN);
    prom_sample_u64(&b, "g", "gpu=\"1\"", UINT64_MAX);
    assert_string_equal(b.s, "# HELP g h\n# TYPE g gauge\ng 1.5\ng 2\ng{gpu=\"0\"} NaN\n"
                             "g{gpu=\"1\"} 18446744073709551615\n");
    strbuf_free(&b);
}

static void test_histogram(void **state)
{
    (void)state;
    struct strbuf b = STRBUF_INIT;
    const double bounds[] = {0.1, 1, 2.5};
    const uint64_t counts[] = {2, 0, 3, 1}; /* per bucket; the last is above 2.5 */
    prom_family(&b, "d_seconds", PROM_HISTOGRAM, "durations");
    prom_histogram(&b, "d_seconds", "stage=\"x\"", bounds, 3, counts, 9.25);
    assert_string_equal(b.s,
                        "# HELP d_seconds durations\n"
                        "# TYPE d_seconds histogram\n"
                        "d_seconds_bucket{stage=\"x\",le=\"0.1\"} 2\n"
                        "d_seconds_bucket{stage=\"x\",le=\"1\"} 2\n"
                        "d_seconds_bucket{stage=\"x\",le=\"2.5\"} 5\n"
                        "d_seconds_bucket{stage=\"x\",le=\"+Inf\"} 6\n"
                        "d_seconds_sum{stage=\"x\"} 9.25\n"
                        "d_seconds_count{stage=\"x\"} 6\n");
    strbuf_reset(&b);
    prom_histogram(&b, "h", NULL, bounds, 1, counts, 0);
    assert_string_equal(b.s, "h_bucket{le=\"0.1\"} 2\nh_bucket{le=\"+Inf\"} 2\nh_sum 0\nh_count 2\n");
    strbuf_free(&b);
}

/* --- the exposition of live aggregates ---------------------------------------------------- */

static struct marker_token token(char kind, int64_t t_ns, int32_t pid, int32_t tid,
                                 const char *name, const char *value, double number)
{
    struct marker_token t = {.kind = kind, .t_ns = t_ns, .pid = pid, .tid = tid, .name = name,
                             .name_len = strlen(name), .value = value,
                             .value_len = value ? strlen(value) : 0, .number = number};
    return t;
}

static void feed(struct live_metrics *live, struct marker_token t)
{
    live_on_marker(live, &t);
}

/* Checks the structure of an exposition: every sample belongs to the family whose HELP and
 * TYPE lines came last (histograms: _bucket, _sum, _count), no family appears twice, and each
 * HELP is followed by its TYPE. Returns the number of families. */
static size_t check_blocks(const char *text)
{
    char families[256][128];
    size_t n = 0;
    char current[128] = "", type[32] = "";
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        assert_non_null(end); /* every line ends with a newline */
        char l[4096];
        size_t len = (size_t)(end - line);
        assert_true(len < sizeof l);
        memcpy(l, line, len);
        l[len] = '\0';
        if (!strncmp(l, "# HELP ", 7)) {
            char name[128];
            assert_int_equal(sscanf(l + 7, "%127s", name), 1);
            for (size_t i = 0; i < n; i++)
                assert_string_not_equal(families[i], name); /* one block per family */
            assert_true(n < 256);
            snprintf(families[n++], sizeof families[0], "%s", name);
            snprintf(current, sizeof current, "%s", name);
            /* the TYPE line follows */
            const char *next = end + 1;
            char want[160];
            snprintf(want, sizeof want, "# TYPE %s ", name);
            assert_memory_equal(next, want, strlen(want));
            assert_int_equal(sscanf(next + strlen(want), "%31s", type), 1);
        } else if (!strncmp(l, "# TYPE ", 7)) {
            /* checked with its HELP */
        } else {
            char name[256];
            size_t k = strcspn(l, "{ ");
            assert_true(k < sizeof name);
            memcpy(name, l, k);
            name[k] = '\0';
            size_t cl = strlen(current);
            if (!strcmp(type, "histogram")) {
                assert_memory_equal(name, current, cl);
                const char *suffix = name + cl;
                assert_true(!strcmp(suffix, "_bucket") || !strcmp(suffix, "_sum") ||
                            !strcmp(suffix, "_count"));
            } else {
                assert_string_equal(name, current);
            }
            if (!strcmp(type, "counter"))
                assert_true(cl > 6 && !strcmp(current + cl - 6, "_total"));
        }
        line = end + 1;
    }
    return n;
}

/* A sample table as the sampler builds it, with two GPUs whose series interleave. */
static void fake_table(struct sample_table *tab, struct series_def *defs, size_t *n)
{
    size_t k = 0;
    defs[k++] = (struct series_def){"process_cpu_seconds_total", "", SERIES_COUNTER, "proc", 0};
    defs[k++] = (struct series_def){"process_count", "", SERIES_GAUGE, "proc", 0};
    defs[k++] = (struct series_def){"gpu_utilization_ratio", "gpu=\"0\"", SERIES_GAUGE, "nvml", 0};
    defs[k++] = (struct series_def){"gpu_power_watts", "gpu=\"0\"", SERIES_GAUGE, "nvml", 0};
    defs[k++] = (struct series_def){"gpu_utilization_ratio", "gpu=\"1\"", SERIES_GAUGE, "nvml", 0};
    defs[k++] = (struct series_def){"gpu_power_watts", "gpu=\"1\"", SERIES_GAUGE, "nvml", 0};
    defs[k++] = (struct series_def){"odd_events", "", SERIES_COUNTER, "test", 0};
    defs[k++] = (struct series_def){"bad-name", "", SERIES_GAUGE, "test", 0};
    *n = k;
    memset(tab, 0, sizeof *tab);
    tab->defs = defs;
    tab->n_series = k;
    tab->n = tab->cap = 1;
    tab->t_ns = calloc(1, sizeof *tab->t_ns);
    tab->v = calloc(k, sizeof *tab->v);
    for (size_t i = 0; i < k; i++) {
        tab->v[i] = calloc(1, sizeof **tab->v);
        tab->v[i][0] = (double)i + 0.5;
    }
    tab->v[5][0] = NAN; /* gpu 1 power not read at this tick */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    tab->t_ns[0] = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void free_table(struct sample_table *tab)
{
    for (size_t i = 0; i < tab->n_series; i++)
        free(tab->v[i]);
    free(tab->v);
    free(tab->t_ns);
}

static char *render_sample_state(struct live_metrics *live)
{
    struct sample_table tab;
    struct series_def defs[16];
    size_t n;
    fake_table(&tab, defs, &n);
    live_on_sample(live, &tab, 0);
    free_table(&tab);

    int64_t ms = 1000000;
    live_expect_markers(live);
    feed(live, token('B', 0, 10, 10, "load", NULL, 0));
    feed(live, token('E', 40 * ms, 10, 10, "load", NULL, 0));
    feed(live, token('B', 40 * ms, 10, 10, "tr\"ain\\", NULL, 0));
    feed(live, token('C', 41 * ms, 10, 10, "images", NULL, 32));
    feed(live, token('C', 42 * ms, 10, 10, "loss", NULL, 0.25));
    feed(live, token('I', 42 * ms, 10, 10, "checkpoint", NULL, 0));
    feed(live, token('M', 42 * ms, 10, 10, "model", "resnet \"50\"\nv2 \\ok", 0));
    live_on_marker(live, NULL);
    live_set_sampler_errors(live, 7);
    size_t len;
    char *text = live_render(live, &len);
    assert_int_equal(strlen(text), len);
    return text;
}

static void test_live_exposition(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    char *text = render_sample_state(live);

    assert_true(check_blocks(text) >= 15);
    assert_non_null(strstr(text, "mlbench_build_info{version=\"" MLBENCH_VERSION "\",commit=\""));
    assert_non_null(strstr(text, "\nmlbench_up 1\n"));
    assert_non_null(strstr(text, "\nmlbench_samples_total 1\n"));
    assert_non_null(strstr(text, "\nmlbench_sampler_errors_total 7\n"));
    /* resource series: prefix, kinds, labels kept, grouped by family, NaN left out */
    assert_non_null(strstr(text, "# TYPE mlbench_process_cpu_seconds_total counter\n"
                                 "mlbench_process_cpu_seconds_total 0.5\n"));
    assert_non_null(strstr(text, "# TYPE mlbench_process_tree_processes gauge\n"
                                 "mlbench_process_tree_processes 1.5\n"));
    assert_null(strstr(text, "mlbench_process_count"));
    assert_non_null(strstr(text, "# TYPE mlbench_gpu_utilization_ratio gauge\n"
                                 "mlbench_gpu_utilization_ratio{gpu=\"0\"} 2.5\n"
                                 "mlbench_gpu_utilization_ratio{gpu=\"1\"} 4.5\n"));
    assert_non_null(strstr(text, "mlbench_gpu_power_watts{gpu=\"0\"} 3.5\n"));
    assert_null(strstr(text, "mlbench_gpu_power_watts{gpu=\"1\"}"));
    assert_non_null(strstr(text, "# TYPE mlbench_odd_events_total counter\n"));
    assert_null(strstr(text, "bad-name"));
    /* stages */
    assert_non_null(strstr(text, "# TYPE mlbench_stage_duration_seconds histogram\n"));
    assert_non_null(strstr(text, "mlbench_stage_duration_seconds_bucket{stage=\"load\",le=\"0.025\"} 0\n"
                                 "mlbench_stage_duration_seconds_bucket{stage=\"load\",le=\"0.05\"} 1\n"));
    assert_non_null(strstr(text, "mlbench_stage_duration_seconds_bucket{stage=\"load\",le=\"+Inf\"} 1\n"
                                 "mlbench_stage_duration_seconds_sum{stage=\"load\"} 0.04\n"
                                 "mlbench_stage_duration_seconds_count{stage=\"load\"} 1\n"));
    assert_non_null(strstr(text, "mlbench_stage_active{stage=\"load\"} 0\n"));
    assert_non_null(strstr(text, "mlbench_stage_active{stage=\"tr\\\"ain\\\\\"} 1\n"));
    /* markers */
    assert_non_null(strstr(text, "mlbench_marker_value{name=\"images\"} 32\n"));
    assert_non_null(strstr(text, "mlbench_marker_value{name=\"loss\"} 0.25\n"));
    assert_non_null(strstr(text, "mlbench_marker_sum_total{name=\"images\"} 32\n"));
    assert_null(strstr(text, "mlbench_marker_sum_total{name=\"loss\"}"));
    assert_non_null(strstr(text, "mlbench_marker_samples_total{name=\"loss\"} 1\n"));
    assert_non_null(strstr(text, "mlbench_marker_instants_total{name=\"checkpoint\"} 1\n"));
    assert_non_null(strstr(text, "mlbench_metadata_info{key=\"model\",value=\"resnet \\\"50\\\"\\nv2 \\\\ok\"} 1\n"));
    assert_non_null(strstr(text, "\nmlbench_markers_received_total 7\n"));
    assert_non_null(strstr(text, "\nmlbench_markers_malformed_total 1\n"));
    assert_non_null(strstr(text, "mlbench_markers_dropped_total{reason=\"stage_limit\"} 0\n"));
    free(text);
    live_free(live);
}

/* Without a marker receiver the marker families are absent, not 0. */
static void test_live_without_markers(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    size_t len;
    char *text = live_render(live, &len);
    check_blocks(text);
    assert_non_null(strstr(text, "\nmlbench_up 0\n")); /* no sample yet */
    assert_null(strstr(text, "mlbench_markers_"));
    assert_null(strstr(text, "mlbench_stage_"));
    free(text);
    live_free(live);
}

/* promtool, the reference checker, when it is installed (the integration test checks a real
 * scrape too). */
static void test_promtool(void **state)
{
    (void)state;
    if (access("/usr/bin/promtool", X_OK) != 0) {
        print_message("skipped: /usr/bin/promtool not installed (Debian package prometheus)\n");
        return;
    }
    struct live_metrics *live = live_new();
    char *text = render_sample_state(live);
    char path[] = "/tmp/mlbench-prom-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < %s 2>&1", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    unlink(path);
    if (rc != 0)
        print_message("promtool says:\n%s\n", out);
    assert_int_equal(rc, 0);
    free(text);
    live_free(live);
}

/* --- listen addresses ---------------------------------------------------------------------- */

static void expect_addr(const char *s, const char *want)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256] = "", got[80];
    int rc = http_parse_listen(s, &ss, &len, err, sizeof err);
    if (rc != 0)
        print_message("%s: %s\n", s, err);
    assert_int_equal(rc, 0);
    assert_string_equal(http_format_address((struct sockaddr *)&ss, len, got, sizeof got), want);
}

static void expect_bad(const char *s, const char *fragment)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256] = "";
    assert_int_equal(http_parse_listen(s, &ss, &len, err, sizeof err), -1);
    if (!strstr(err, fragment))
        print_message("'%s' gave: %s\n", s, err);
    assert_non_null(strstr(err, fragment));
}

static void test_listen_addresses(void **state)
{
    (void)state;
    expect_addr("127.0.0.1:9464", "127.0.0.1:9464");
    expect_addr("0.0.0.0:80", "0.0.0.0:80");
    expect_addr(":9100", "127.0.0.1:9100");   /* loopback unless an address is given */
    expect_addr("9100", "127.0.0.1:9100");
    expect_addr("[::1]:9464", "[::1]:9464");
    expect_addr("[::]:1", "[::]:1");
    expect_addr("127.0.0.1:0", "127.0.0.1:0"); /* the system picks the port */
    expect_bad("", "empty");
    expect_bad("127.0.0.1", "port '127.0.0.1'"); /* no port: the whole is read as one */
    expect_bad("127.0.0.1:", "port ''");
    expect_bad("127.0.0.1:65536", "port '65536'");
    expect_bad("127.0.0.1:-1", "port '-1'");
    expect_bad("127.0.0.1:http", "port 'http'");
    expect_bad("::1:9464", "brackets");
    expect_bad("[::1]9464", "bad listen address '[::1]9464'");
    expect_bad("[::1", "bad listen address '[::1'");
    expect_bad("[]:80", "bad listen address '[]:80'");
    expect_bad("[127.0.0.1]:80", "not an IPv6 address");
}

/* The server refuses a port in use with a message naming the address, and serves on port 0. */
static void test_server_bind(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    char err[256] = "";
    struct http_server *a = http_server_start("127.0.0.1:0", live, err, sizeof err);
    assert_non_null(a);
    const char *addr = http_server_address(a);
    assert_memory_equal(addr, "127.0.0.1:", 10);
    assert_true(atoi(addr + 10) > 0);
    struct http_server *b = http_server_start(addr, live, err, sizeof err);
    assert_null(b);
    assert_non_null(strstr(err, addr));
    assert_non_null(strstr(err, "in use"));
    http_server_stop(a);
    http_server_stop(NULL);
    assert_null(http_server_start("nonsense", live, err, sizeof err));
    assert_non_null(strstr(err, "nonsense"));
    live_free(live);
}

static int connect_to(const char *address)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(address + 10))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Clients that leave in the middle of a request give their connection back at once: 400 of
 * them (more than the 256 connections and the backlog) leave /healthz answering. With the
 * epoll that libmicrohttpd picks by itself they were held until the idle timeout (fuzz_http). */
static void test_server_clients_leaving(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    char err[256] = "";
    struct http_server *srv = http_server_start("127.0.0.1:0", live, err, sizeof err);
    assert_non_null(srv);
    static const char partial[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 400; i++) {
        int fd = connect_to(http_server_address(srv));
        assert_int_equal(send(fd, partial, sizeof partial - 1, MSG_NOSIGNAL), sizeof partial - 1);
        shutdown(fd, SHUT_WR);
        close(fd);
        if (i % 50 == 49)
            usleep(20000); /* let the server see them go */
    }
    usleep(200000);
    int fd = connect_to(http_server_address(srv));
    static const char get[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(send(fd, get, sizeof get - 1, MSG_NOSIGNAL), sizeof get - 1);
    char buf[256] = "";
    assert_true(recv(fd, buf, sizeof buf - 1, 0) > 12);
    assert_memory_equal(buf, "HTTP/1.1 200", 12);
    close(fd);
    http_server_stop(srv);
    live_free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_live_exposition),
        cmocka_unit_test(test_live_without_markers),
        cmocka_unit_test(test_promtool),
        cmocka_unit_test(test_listen_addresses),
        cmocka_unit_test(test_server_bind),
        cmocka_unit_test(test_server_clients_leaving),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
