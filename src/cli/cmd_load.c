/* cmd_load: `mlbench load [options] URL`: drives an HTTP inference endpoint with one of MLPerf
 * LoadGen's scenarios (src/load/), optionally starting the server itself (--server-cmd: run
 * and measured like a workload of `mlbench run`, markers and samples included, stopped after),
 * and writes one result document with a "load" section (docs/load.md). The generator runs as
 * the bench session's companion (bench/bench.h) beside the server, or alone. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cli/commands.h"
#include "cli/load_report.h"
#include "cli/options.h"
#include "load/earlystop.h"
#include "load/judge.h"
#include "load/load.h"
#include "load/peak.h"
#include "live/live.h"
#include "load/request.h"
#include "measure/cmdline.h"
#include "measure/sampler.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/units.h"
#include "util/xalloc.h"

#define DEFAULT_MIN_DURATION_S 60.0
#define DEFAULT_MIN_QUERIES 100
#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_READY_TIMEOUT_S 60.0
#define DEFAULT_PEAK_TOLERANCE 0.05
#define KSERVE_BODIES 16 /* distinct bodies the preset cycles through */

static const char usage_text[] =
    "Usage: mlbench load [options] URL\n"
    "\n"
    "Drives an HTTP endpoint (an inference server) with one of MLPerf LoadGen's scenarios and\n"
    "measures latency from each query's scheduled time, so a stalled server is not hidden.\n"
    "The result goes to the store like a run's (mlbench history, show, compare, report).\n"
    "\n"
    "Scenario:\n"
    "      --scenario S       single-stream (default: one query at a time, metric p90),\n"
    "                         multi-stream (N samples per query, p99), server (Poisson arrivals\n"
    "                         at --qps, p99) or offline (every connection busy: throughput)\n"
    "      --qps N            server: arrivals per second\n"
    "      --find-peak        server: the largest QPS whose percentile meets --latency-bound\n"
    "                         (doubling and bisecting short probes, then a full-length run)\n"
    "      --probe-duration D find-peak: length of a probe (default a tenth of --min-duration, 2s..30s)\n"
    "      --latency-bound D  e.g. 15ms: the run is INVALID when the percentile is above it\n"
    "      --percentile P     the latency metric, 0 < P < 100 (default 90 single-stream, else 99)\n"
    "      --samples-per-query N  multi-stream (default 8)\n"
    "      --min-duration D   issue queries at least this long (default 60s)\n"
    "      --min-queries N    and at least this many (default 100)\n"
    "      --connections N    keep-alive connections (default 1 single-stream, N multi-stream,\n"
    "                         16 offline, 64 server)\n"
    "      --threads N        generator threads (default 1)\n"
    "      --request-timeout D  a response later than this counts as an error (default 10s)\n"
    "      --seed N           seed of the server scenario's arrivals (default: random, recorded)\n"
    "Requests:\n"
    "  -X, --method M         HTTP method (default GET, POST with a body)\n"
    "  -H, --header 'N: V'    an extra header (repeatable)\n"
    "      --body-file PATH   a body; repeat to cycle several; a folder gives each file in it,\n"
    "                         a .jsonl file one body per line\n"
    "      --kserve MODEL     KServe v2 / Triton inference requests: POST\n"
    "                         /v2/models/MODEL/infer with bodies built from the options below\n"
    "      --input-shape S    the preset's input shape (default 1,1,28,28)\n"
    "      --input-dtype T    FP32 (default), FP64, INT32, INT64, UINT8\n"
    "      --input-name N     the input's name (default input)\n"
    "      --kserve-binary    the preset's values as binary tensor data after a JSON header\n"
    "                         (Inference-Header-Content-Length), not JSON numbers\n"
    "Server:\n"
    "      --server-cmd CMD   start the server (its own process group, sampled, its markers\n"
    "                         received) and stop it afterwards\n"
    "      --ready-url URL    wait until a GET of URL answers 2xx (default: until URL's port\n"
    "                         accepts a connection)\n"
    "      --ready-timeout D  how long to wait for it (default 60s)\n"
    "      --grace D          SIGTERM to SIGKILL when stopping it (default 5s)\n"
    "Output:\n"
    "  -l, --label LABEL      label of the result\n"
    "  -o, --output FILE      also write the result document to FILE\n"
    "      --json             print the result document instead of the summary\n"
    "      --interval D       resource sampling interval (default: adaptive)\n"
    "      --serve ADDR       Prometheus /metrics while it runs\n"
    "      --store DIR        result store (default .mlbench)\n"
    "  -q, --quiet            no progress lines\n"
    "  -h, --help             this help\n"
    "\n"
    "Exit status: 0 every scenario run VALID, 1 INVALID (or the server failed), 2 bad input or\n"
    "the endpoint refused the connection before the start, 3 the result could not be written.\n";

struct load_options {
    const char *scenario, *qps_s, *latency_bound, *ready_url, *server_cmd, *method, *kserve;
    const char *input_shape, *input_dtype, *input_name, *label, *output, *store, *serve;
    double percentile, min_duration_s, probe_s, timeout_s, ready_timeout_s, grace_s;
    long long min_queries, seed;
    int connections, threads, samples;
    bool find_peak, json, quiet, kserve_binary;
    int64_t interval_ns;
    struct cli_strings headers, bodies;
    char *url;
};

/* Everything the companion needs: the plan and what it measured. */
struct load_job {
    struct load_options *o;
    struct load_target target;
    struct load_target ready;  /* --ready-url */
    bool has_ready;
    struct load_config cfg;
    struct load_rules rules;
    struct load_runs runs;     /* what ran, in order (load_report.h) */
    char error[512];           /* why the load did not run, or "" */
    bool refused;              /* the endpoint refused before the start: exit 2 */
    volatile int *stop;
};

static int parse(int argc, char **argv, struct load_options *o, char *err, size_t errlen)
{
    const struct cli_option table[] = {
        CLI_OPT_STRING("scenario", 0, &o->scenario, CLI_NONEMPTY, "needs a scenario"),
        CLI_OPT_STRING("qps", 0, &o->qps_s, CLI_NONEMPTY, "needs a rate"),
        CLI_OPT_FLAG("find-peak", 0, &o->find_peak),
        CLI_OPT_SECONDS("probe-duration", 0, &o->probe_s, 0.1, 3600, 0, "is not a duration from 100ms to 1h"),
        CLI_OPT_STRING("latency-bound", 0, &o->latency_bound, CLI_NONEMPTY, "needs a duration"),
        CLI_OPT_NUMBER("percentile", 0, &o->percentile, 0, 100, CLI_OPEN_MIN | CLI_OPEN_MAX,
                       "is not a percentile between 0 and 100 (exclusive), e.g. 99"),
        CLI_OPT_INTEGER("samples-per-query", 0, &o->samples, 1, 1024, 0, "is not a count from 1 to 1024"),
        CLI_OPT_SECONDS("min-duration", 0, &o->min_duration_s, 0, 7 * 86400.0, CLI_OPEN_MIN,
                        "is not a positive duration (e.g. 60s, 500ms)"),
        CLI_OPT_INTEGER("min-queries", 0, &o->min_queries, 1, 1000000000000LL, 0, "is not a count (1 or more)"),
        CLI_OPT_INTEGER("connections", 'c', &o->connections, 1, 10000, 0, "is not a count from 1 to 10000"),
        CLI_OPT_INTEGER("threads", 't', &o->threads, 1, 256, 0, "is not a count from 1 to 256"),
        CLI_OPT_SECONDS("request-timeout", 0, &o->timeout_s, 0, 3600, CLI_OPEN_MIN,
                        "is not a positive duration up to 1h"),
        CLI_OPT_INTEGER("seed", 0, &o->seed, 0, INT64_MAX, 0, "is not a seed (a whole number >= 0)"),
        CLI_OPT_STRING("method", 'X', &o->method, CLI_NONEMPTY, "needs a method, e.g. POST"),
        CLI_OPT_STRINGS("header", 'H', &o->headers, CLI_NONEMPTY, NULL, "needs 'Name: value'"),
        CLI_OPT_STRINGS("body-file", 0, &o->bodies, CLI_NONEMPTY, NULL, "needs a file name"),
        CLI_OPT_STRING("kserve", 0, &o->kserve, CLI_NONEMPTY, "needs a model name"),
        CLI_OPT_STRING("input-shape", 0, &o->input_shape, CLI_NONEMPTY, "needs a shape, e.g. 1,1,28,28"),
        CLI_OPT_STRING("input-dtype", 0, &o->input_dtype, CLI_NONEMPTY, "needs a datatype, e.g. FP32"),
        CLI_OPT_STRING("input-name", 0, &o->input_name, CLI_NONEMPTY, "needs a name"),
        CLI_OPT_FLAG("kserve-binary", 0, &o->kserve_binary),
        CLI_OPT_STRING("server-cmd", 0, &o->server_cmd, CLI_NOT_BLANK, "needs a command"),
        CLI_OPT_STRING("ready-url", 0, &o->ready_url, CLI_NONEMPTY, "needs a URL"),
        CLI_OPT_SECONDS("ready-timeout", 0, &o->ready_timeout_s, 0, 86400, CLI_OPEN_MIN,
                        "is not a positive duration (e.g. 60s)"),
        CLI_OPT_SECONDS("grace", 0, &o->grace_s, 0, 3600, 0, "is not a duration up to 1h"),
        CLI_OPT_STRING("label", 'l', &o->label, CLI_NOT_BLANK, "needs a label"),
        CLI_OPT_STRING("output", 'o', &o->output, CLI_NONEMPTY, "needs a file name"),
        CLI_OPT_FLAG("json", 0, &o->json),
        CLI_OPT_NANOSECONDS("interval", 0, &o->interval_ns, SAMPLER_MIN_INTERVAL_NS,
                            SAMPLER_MAX_INTERVAL_NS, "is not a duration from 10ms to 10s"),
        CLI_OPT_LISTEN("serve", &o->serve),
        CLI_OPT_STORE(&o->store),
        CLI_OPT_FLAG("quiet", 'q', &o->quiet),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {"load", table, 0, usage_text};
    struct cli_args args;
    int rc = cli_options_parse(&parser, argc, argv, &args, err, errlen);
    if (rc != CLI_OK)
        return rc == CLI_HELP ? 1 : -1;
    if (args.n != 1) {
        snprintf(err, errlen, args.n ? "one URL only (got '%s' and '%s')" : "no URL: give the "
                 "endpoint to drive, e.g. http://127.0.0.1:8000/v2/models/cnn/infer",
                 args.n ? args.v[0] : "", args.n > 1 ? args.v[1] : "");
        return -1;
    }
    o->url = args.v[0];
    return 0;
}

/* Refuses an option the scenario never uses: given is whether it was. */
static int unused(bool given, const char *option, const char *scenario, char *err, size_t errlen)
{
    if (!given)
        return 0;
    snprintf(err, errlen, "%s does nothing in the %s scenario: leave it out (or choose a scenario "
             "that uses it)", option, scenario);
    return -1;
}

static int parse_shape(const char *s, int64_t *dims, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    for (const char *p = s; *p;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v <= 0 || *n == 8 || (*end && *end != ',')) {
            snprintf(err, errlen, "--input-shape '%s' is not a shape: up to 8 positive whole "
                     "numbers separated by commas, e.g. 1,1,28,28", s);
            return -1;
        }
        dims[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* Checks the options against each other and builds the job's plan. Returns 0, or -1 with a
 * message in err. */
static int plan(struct load_job *job, struct load_bodies *bodies, char *err, size_t errlen)
{
    struct load_options *o = job->o;
    int sc = load_scenario_parse(o->scenario);
    if (sc < 0) {
        snprintf(err, errlen, "--scenario '%s' is not a scenario: use single-stream, multi-stream, "
                 "server or offline", o->scenario);
        return -1;
    }
    const char *name = o->scenario;
    struct load_config *c = &job->cfg;
    c->scenario = (enum load_scenario)sc;
    if (c->scenario == LOAD_SERVER) {
        if (!o->qps_s && !o->find_peak) {
            snprintf(err, errlen, "the server scenario needs --qps N (arrivals per second) or --find-peak");
            return -1;
        }
        if (o->qps_s) {
            char *end;
            errno = 0;
            c->qps = strtod(o->qps_s, &end);
            if (end == o->qps_s || *end || errno || !(c->qps > 0) || c->qps > 1e7) {
                snprintf(err, errlen, "--qps '%s' is not a rate: a number of queries per second "
                         "above 0 (up to 1e7)", o->qps_s);
                return -1;
            }
        }
    } else if (unused(o->qps_s != NULL, "--qps", name, err, errlen) ||
               unused(o->find_peak, "--find-peak", name, err, errlen)) {
        return -1;
    }
    if (unused(o->probe_s > 0 && !o->find_peak, "--probe-duration (without --find-peak)", name, err, errlen) ||
        unused(o->samples > 0 && c->scenario != LOAD_MULTI_STREAM, "--samples-per-query", name, err, errlen) ||
        unused(o->latency_bound && c->scenario == LOAD_OFFLINE, "--latency-bound", name, err, errlen) ||
        unused(o->percentile > 0 && c->scenario == LOAD_OFFLINE, "--percentile", name, err, errlen) ||
        unused(o->seed >= 0 && c->scenario != LOAD_SERVER, "--seed", name, err, errlen))
        return -1;
    if (c->scenario == LOAD_SINGLE_STREAM && (o->connections > 1 || o->threads > 1)) {
        snprintf(err, errlen, "single-stream keeps one query outstanding: --connections and "
                 "--threads must be 1 (use multi-stream, server or offline for more)");
        return -1;
    }
    job->rules.latency_bound_ns = 0;
    if (o->latency_bound) {
        double s;
        if (units_parse_seconds(o->latency_bound, &s) < 0 || !(s > 0) || s > 3600) {
            snprintf(err, errlen, "--latency-bound '%s' is not a duration above 0 (e.g. 15ms)",
                     o->latency_bound);
            return -1;
        }
        job->rules.latency_bound_ns = (int64_t)llround(s * 1e9);
    }
    if (o->find_peak && !o->latency_bound) {
        snprintf(err, errlen, "--find-peak needs --latency-bound (the bound the peak must meet, e.g. 15ms)");
        return -1;
    }
    c->samples_per_query = o->samples > 0 ? o->samples : 8;
    c->connections = o->connections > 0 ? o->connections
                     : c->scenario == LOAD_SINGLE_STREAM ? 1
                     : c->scenario == LOAD_MULTI_STREAM ? c->samples_per_query
                     : c->scenario == LOAD_OFFLINE ? 16 : 64;
    c->threads = o->threads > 0 ? o->threads : 1;
    if (c->scenario == LOAD_MULTI_STREAM && (c->threads > 1 || c->connections < c->samples_per_query)) {
        snprintf(err, errlen, "multi-stream sends the %d samples of a query at once on one "
                 "thread: --threads 1 and at least %d --connections", c->samples_per_query,
                 c->samples_per_query);
        return -1;
    }
    if (c->threads > c->connections) {
        snprintf(err, errlen, "--threads %d is more than the %d connections: each thread needs one",
                 c->threads, c->connections);
        return -1;
    }
    c->min_duration_s = o->min_duration_s > 0 ? o->min_duration_s : DEFAULT_MIN_DURATION_S;
    c->min_queries = o->min_queries > 0 ? (uint64_t)o->min_queries : DEFAULT_MIN_QUERIES;
    c->request_timeout_s = o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
    if (o->seed >= 0) {
        c->seed = (uint64_t)o->seed;
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->seed = ((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20) ^ (uint64_t)ts.tv_sec) & INT64_MAX;
    }
    job->rules.min_duration_s = c->min_duration_s;
    job->rules.min_queries = c->min_queries;
    job->rules.percentile = o->percentile > 0 ? o->percentile
                            : c->scenario == LOAD_SINGLE_STREAM ? 90 : 99;
    job->rules.confidence = EARLYSTOP_CONFIDENCE;

    /* the URL, the bodies, the requests */
    char *url = o->url;
    char *kurl = NULL;
    if (o->kserve) {
        if (strchr(o->kserve, '/') || strchr(o->kserve, '?') || strchr(o->kserve, ' ')) {
            snprintf(err, errlen, "--kserve '%s' is not a model name (no '/', '?' or spaces)", o->kserve);
            return -1;
        }
        if (o->bodies.n) {
            snprintf(err, errlen, "--kserve builds the bodies itself: leave out --body-file");
            return -1;
        }
        struct load_target probe;
        if (load_target_parse(o->url, &probe, err, errlen) < 0)
            return -1;
        bool bare = strcmp(probe.path, "/") == 0;
        load_target_free(&probe);
        if (bare) { /* http://host:port: the preset's path */
            size_t n = strlen(o->url);
            kurl = xasprintf("%.*s/v2/models/%s/infer", (int)(n && o->url[n - 1] == '/' ? n - 1 : n),
                             o->url, o->kserve);
            url = kurl;
        }
    } else if (o->input_shape || o->input_dtype || o->input_name || o->kserve_binary) {
        snprintf(err, errlen, "--input-shape, --input-dtype, --input-name and --kserve-binary "
                 "belong to --kserve");
        return -1;
    }
    int rc = load_target_parse(url, &job->target, err, errlen);
    free(kurl);
    if (rc < 0)
        return -1;
    if (o->kserve) {
        int64_t dims[8];
        size_t nd;
        if (parse_shape(o->input_shape ? o->input_shape : "1,1,28,28", dims, &nd, err, errlen) < 0 ||
            load_bodies_kserve(bodies, o->input_name ? o->input_name : "input", dims, nd,
                               o->input_dtype ? o->input_dtype : "FP32", o->kserve_binary,
                               KSERVE_BODIES, c->seed ^ 0x6b73, err, errlen) < 0)
            return -1;
    }
    for (size_t i = 0; i < o->bodies.n; i++)
        if (load_bodies_add_path(bodies, o->bodies.v[i], err, errlen) < 0)
            return -1;
    const char *method = o->method ? o->method : bodies->n ? "POST" : "GET";
    struct load_request *req;
    size_t nreq;
    if (load_requests_build(&job->target, method, o->headers.v, o->headers.n, bodies, &req, &nreq,
                            err, errlen) < 0)
        return -1;
    c->requests = req;
    c->n_requests = nreq;
    memcpy(&c->addr, &job->target.addr, job->target.addrlen);
    c->addrlen = job->target.addrlen;
    c->address = job->target.address;
    if (o->ready_url) {
        if (!o->server_cmd) {
            snprintf(err, errlen, "--ready-url waits for the server --server-cmd starts: give both");
            return -1;
        }
        if (load_target_parse(o->ready_url, &job->ready, err, errlen) < 0)
            return -1;
        job->has_ready = true;
    } else if (!o->server_cmd && (o->ready_timeout_s > 0 || o->grace_s >= 0)) {
        snprintf(err, errlen, "--ready-timeout and --grace are about the server --server-cmd starts");
        return -1;
    }
    return 0;
}

/* One attempt at the server's readiness: a TCP connect to t, and with get a GET of t's path
 * answered 2xx. */
static bool ready_once(const struct load_target *t, bool get, int *why)
{
    int fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    *why = errno;
    if (fd < 0)
        return false;
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    bool ok = connect(fd, (const struct sockaddr *)&t->addr, t->addrlen) == 0;
    *why = ok ? 0 : errno;
    if (ok && get) {
        char req[1024], resp[64] = "";
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                         t->path, t->address);
        ok = n > 0 && (size_t)n < sizeof req && send(fd, req, (size_t)n, MSG_NOSIGNAL) == n;
        size_t got = 0;
        while (ok && got < 12) {
            ssize_t k = recv(fd, resp + got, sizeof resp - 1 - got, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        ok = ok && got >= 12 && strncmp(resp, "HTTP/1.", 7) == 0 && resp[9] == '2';
    }
    close(fd);
    return ok;
}

/* Waits for the server: returns 0 once ready, -1 with job->error set when it did not become
 * ready in time or the run was stopped. */
static int wait_ready(struct load_job *job)
{
    const struct load_target *t = job->has_ready ? &job->ready : &job->target;
    double limit = job->o->ready_timeout_s > 0 ? job->o->ready_timeout_s : DEFAULT_READY_TIMEOUT_S;
    int64_t give_up = mono_ns() + (int64_t)(limit * 1e9);
    while (!*job->stop) {
        int why;
        if (ready_once(t, job->has_ready, &why))
            return 0;
        if (mono_ns() > give_up) {
            char d[32];
            snprintf(job->error, sizeof job->error, "the server was not ready within %s (%s %s): "
                     "check --server-cmd, or wait longer with --ready-timeout",
                     units_duration(limit * 1e9, d, sizeof d),
                     job->has_ready ? "no 2xx answer from" : "no connection to", t->address);
            return -1;
        }
        struct timespec ms100 = {0, 100000000};
        nanosleep(&ms100, NULL);
    }
    snprintf(job->error, sizeof job->error, "the server ended (or mlbench was stopped) before it was ready");
    return -1;
}

/* Runs one scenario run and books it; returns 0, or -1 when it could not start. */
static int one(struct load_job *job, double qps, double duration_s, const char *role)
{
    struct load_config c = job->cfg;
    c.qps = qps;
    c.min_duration_s = duration_s;
    c.abort = job->stop;
    struct load_rules rules = job->rules;
    rules.min_duration_s = duration_s;
    if (strcmp(role, "probe") == 0) /* a probe is short: its query count follows its length */
        c.min_queries = rules.min_queries = 1;
    struct load_entry *e = load_runs_add(&job->runs, role, &rules);
    if (!job->o->quiet) {
        char d[32], q[48] = "";
        if (c.scenario == LOAD_SERVER)
            snprintf(q, sizeof q, " at %.4g QPS", qps);
        log_info("load: %s %s%s for %s ...", role, load_scenario_name(c.scenario), q,
                 units_duration(duration_s * 1e9, d, sizeof d));
    }
    char err[512];
    if (load_execute(&c, &e->run, err, sizeof err) < 0) {
        job->runs.n--; /* nothing ran */
        snprintf(job->error, sizeof job->error, "%s", err);
        job->refused = job->runs.n == 0;
        return -1;
    }
    load_judge(&e->rules, &e->run, &e->verdict);
    if (!job->o->quiet)
        load_report_progress(stderr, e);
    return 0;
}

/* Valid but for a late generator (judge.c gives that one reason). */
static bool valid_but_lag(const struct load_entry *e)
{
    return e->verdict.valid || (e->verdict.client_bound && e->verdict.n_reasons == 1 &&
                                e->run.client_busiest_ratio <= LOAD_BUSY_LIMIT);
}

static int find_peak(struct load_job *job)
{
    const struct load_options *o = job->o;
    double probe = o->probe_s > 0 ? o->probe_s : fmin(30, fmax(2, job->cfg.min_duration_s / 10));
    struct peak_search s;
    peak_init(&s, job->cfg.qps > 0 ? job->cfg.qps : 10, DEFAULT_PEAK_TOLERANCE);
    double qps;
    bool confirm;
    while (!*job->stop && peak_next(&s, &qps, &confirm)) {
        if (one(job, qps, confirm ? job->cfg.min_duration_s : probe, confirm ? "confirm" : "probe") < 0)
            return -1;
        const struct load_entry *e = &job->runs.v[job->runs.n - 1];
        if (e->run.client_busiest_ratio > LOAD_BUSY_LIMIT) {
            snprintf(job->error, sizeof job->error, "the generator itself was the bottleneck at %.4g "
                     "QPS (a thread busy %.0f%% of the time): the peak cannot be found from here; "
                     "add --threads or run it from a less busy machine", qps,
                     e->run.client_busiest_ratio * 100);
            return -1;
        }
        peak_report(&s, confirm ? load_entry_met(e) && valid_but_lag(e) : load_entry_met(e));
    }
    job->runs.peak_qps = s.found;
    job->runs.peak_searched = true;
    return 0;
}

static int companion(void *arg, pid_t pid, volatile int *stop)
{
    struct load_job *job = arg;
    job->stop = stop;
    if (pid > 0 && wait_ready(job) < 0)
        return 1;
    if (job->o->find_peak)
        return find_peak(job) < 0;
    return one(job, job->cfg.qps, job->cfg.min_duration_s, "run") < 0;
}

/* Whether a header's name (up to its colon) says its value is a credential. */
static bool secret_header(const char *h, size_t name_len)
{
    static const char *const names[] = {"authorization", "proxy-authorization", "cookie",
                                        "x-api-key", "api-key"};
    static const char *const parts[] = {"token", "secret", "password", "key"};
    char low[64];
    if (name_len >= sizeof low)
        return false;
    for (size_t i = 0; i < name_len; i++)
        low[i] = (char)tolower((unsigned char)h[i]);
    low[name_len] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(low, names[i]))
            return true;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (strstr(low, parts[i]))
            return true;
    return false;
}

/* The command line, as the result's load.command (what Reproduce shows): the value of a
 * header that carries a credential is left out, since results are shared. */
static json_t *command_json(int argc, char **argv)
{
    json_t *a = json_pack("[s]", "mlbench");
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i], *h = NULL;
        if (i > 0 && (!strcmp(argv[i - 1], "-H") || !strcmp(argv[i - 1], "--header")))
            h = w;
        else if (!strncmp(w, "--header=", 9))
            h = w + 9;
        else if (!strncmp(w, "-H", 2) && w[2])
            h = w + 2;
        const char *colon = h ? strchr(h, ':') : NULL;
        char *word = colon && secret_header(h, (size_t)(colon - h))
                         ? xasprintf("%.*s: REDACTED", (int)(colon - w), w)
                         : units_utf8_sanitize(w, strlen(w));
        json_array_append_new(a, json_string(word));
        free(word);
    }
    return a;
}

int cmd_load(int argc, char **argv)
{
    struct load_options o = {.percentile = -1, .min_queries = -1, .seed = -1, .grace_s = -1};
    char err[1024];
    switch (parse(argc, argv, &o, err, sizeof err)) {
    case 1:
        return 0;
    case -1:
        log_error("load: %s", err);
        return 2;
    }
    if (!o.scenario)
        o.scenario = "single-stream";
    struct load_job job = {.o = &o};
    struct load_bodies bodies = {0};
    int status = 2;
    if (plan(&job, &bodies, err, sizeof err) < 0) {
        log_error("load: %s", err);
        goto out;
    }
    struct run_config rc = {0};
    struct cmdline server = {0};
    if (o.server_cmd) {
        if (cmdline_split(&server, "--server-cmd", o.server_cmd, false, err, sizeof err) < 0) {
            log_error("load: %s", err);
            goto out;
        }
        rc.argv = server.argv;
        for (rc.argc = 0; server.argv[rc.argc]; rc.argc++)
            ;
    } else {
        int why;
        if (!ready_once(&job.target, false, &why)) {
            log_error("load: cannot connect to %s: %s (is the server running? --server-cmd "
                      "starts it)", job.target.address, strerror(why ? why : ECONNREFUSED));
            goto out;
        }
    }
    rc.runs = 1;
    rc.load = true;
    rc.grace_s = o.grace_s >= 0 ? o.grace_s : 5.0;
    rc.label = o.label;
    rc.output = o.output;
    rc.store = o.store ? o.store : store_default_dir();
    rc.quiet = o.quiet;
    rc.json = o.json;
    rc.interval_ns = o.interval_ns ? o.interval_ns : SAMPLER_DEFAULT_INTERVAL_NS;
    rc.interval_adaptive = o.interval_ns == 0;
    rc.serve = o.serve;
    struct bench *b;
    status = bench_open(&rc, &b);
    if (status == 0 && bench_add(b, &rc, NULL) < 0)
        status = 2;
    if (status == 0) {
        struct live_metrics *live = bench_live(b);
        if (live) { /* --serve: each query's latency on /metrics as it ends */
            job.cfg.on_query = live_on_query;
            job.cfg.on_query_arg = live;
        }
        struct bench_companion comp = {.run = companion, .arg = &job};
        const struct repetition *rep = bench_step_with(b, 0, &comp);
        bench_end_runs(b);
        if (job.refused) {
            log_error("load: %s", job.error);
            status = 2;
        } else {
            if (job.error[0])
                log_error("load: %s", job.error);
            json_t *extra = json_object();
            json_t *load = load_report_json(&job.runs, &job.cfg, job.target.address, o.url,
                                            o.server_cmd, rep);
            json_object_set_new(load, "command", command_json(argc, argv));
            json_object_set_new(extra, "load", load);
            struct bench_output out;
            status = bench_finish(b, 0, extra, &out);
            json_decref(extra);
            if (out.doc) {
                if (o.json)
                    json_dumpf(out.doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS), fputc('\n', stdout);
                else
                    load_report_print(stdout, out.doc, out.path);
            }
            if (status == 0 && (job.error[0] || !load_runs_valid(&job.runs)))
                status = 1;
            bench_output_free(&out);
        }
    }
    bench_close(b);
    cmdline_free(&server);
out:
    load_runs_free(&job.runs);
    load_requests_free((struct load_request *)job.cfg.requests, job.cfg.n_requests);
    load_bodies_free(&bodies);
    load_target_free(&job.target);
    load_target_free(&job.ready);
    free(o.headers.v);
    free(o.bodies.v);
    return status;
}
