/* load_job: `mlbench load`'s measuring session (load_job.h): the plan, the server's readiness,
 * the scenario runs or the peak search as the session's companion, and the result. */
#include "session/load_job.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "session/load_runs.h"
#include "live/live.h"
#include "load/earlystop.h"
#include "load/judge.h"
#include "load/load.h"
#include "load/peak.h"
#include "load/request.h"
#include "measure/cmdline.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/units.h"
#include "util/xalloc.h"

#define DEFAULT_MIN_DURATION_S 60.0
#define DEFAULT_MIN_QUERIES 100
#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_READY_TIMEOUT_S 60.0
#define DEFAULT_GRACE_S 5.0
#define DEFAULT_PEAK_TOLERANCE 0.05
#define KSERVE_BODIES 16 /* distinct bodies the preset cycles through */

/* Everything the companion needs: the plan and what it measured. */
struct job {
    const struct load_job_config *asked;
    bool quiet;                /* no progress lines */
    struct load_target target;
    struct load_target ready;  /* ready_url */
    bool has_ready;
    struct load_config cfg;
    struct load_rules rules;
    struct load_runs runs;     /* what ran, in order (load_runs.h) */
    char error[512];           /* why the load did not run, or "" */
    bool refused;              /* the endpoint refused before the start: exit 2 */
    volatile int *stop;
};

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

/* Checks what was asked (each value, then the values against each other) and builds the job's
 * plan: the scenario's configuration and rules, the target, the requests (their bodies in
 * bodies). Returns 0, or -1 with a message in err naming the option at fault. */
static int plan(struct job *job, struct load_bodies *bodies, char *err, size_t errlen)
{
    const struct load_job_config *o = job->asked;
    const char *name = o->scenario ? o->scenario : "single-stream";
    int sc = load_scenario_parse(name);
    if (sc < 0) {
        snprintf(err, errlen, "--scenario '%s' is not a scenario: use single-stream, multi-stream, "
                 "server or offline", name);
        return -1;
    }
    struct load_config *c = &job->cfg;
    c->scenario = (enum load_scenario)sc;
    if (c->scenario == LOAD_SERVER) {
        if (!o->qps && !o->find_peak) {
            snprintf(err, errlen, "the server scenario needs --qps N (arrivals per second) or --find-peak");
            return -1;
        }
        if (o->qps) {
            char *end;
            errno = 0;
            c->qps = strtod(o->qps, &end);
            if (end == o->qps || *end || errno || !(c->qps > 0) || c->qps > 1e7) {
                snprintf(err, errlen, "--qps '%s' is not a rate: a number of queries per second "
                         "above 0 (up to 1e7)", o->qps);
                return -1;
            }
        }
    } else if (unused(o->qps != NULL, "--qps", name, err, errlen) ||
               unused(o->find_peak, "--find-peak", name, err, errlen)) {
        return -1;
    }
    if (unused(o->probe_s > 0 && !o->find_peak, "--probe-duration (without --find-peak)", name, err, errlen) ||
        unused(o->samples_per_query > 0 && c->scenario != LOAD_MULTI_STREAM, "--samples-per-query", name, err, errlen) ||
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
    c->samples_per_query = o->samples_per_query > 0 ? o->samples_per_query : 8;
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
    c->request_timeout_s = o->request_timeout_s > 0 ? o->request_timeout_s : DEFAULT_TIMEOUT_S;
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
    const char *url = o->url;
    char *kurl = NULL;
    if (o->kserve) {
        if (strchr(o->kserve, '/') || strchr(o->kserve, '?') || strchr(o->kserve, ' ')) {
            snprintf(err, errlen, "--kserve '%s' is not a model name (no '/', '?' or spaces)", o->kserve);
            return -1;
        }
        if (o->n_bodies) {
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
    for (size_t i = 0; i < o->n_bodies; i++)
        if (load_bodies_add_path(bodies, o->bodies[i], err, errlen) < 0)
            return -1;
    const char *method = o->method ? o->method : bodies->n ? "POST" : "GET";
    struct load_request *req;
    size_t nreq;
    if (load_requests_build(&job->target, method, o->headers, o->n_headers, bodies, &req, &nreq,
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
static int wait_ready(struct job *job)
{
    const struct load_target *t = job->has_ready ? &job->ready : &job->target;
    double limit = job->asked->ready_timeout_s > 0 ? job->asked->ready_timeout_s : DEFAULT_READY_TIMEOUT_S;
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

/* One line on a finished scenario run, for the progress log (stderr). */
static void progress(const struct load_entry *e)
{
    char a[32], b[32], c[32];
    const struct load_run *r = &e->run;
    bool probe = strcmp(e->role, "probe") == 0;
    fprintf(stderr, "mlbench: load: %s: %llu queries, %.1f QPS, p50 %s, p%g %s, max %s: %s%s%s\n",
            e->role, (unsigned long long)r->issued, load_run_throughput(r),
            units_duration((double)hist_percentile(&r->latency, 50), a, sizeof a), e->rules.percentile,
            units_duration((double)e->verdict.percentile_ns, b, sizeof b),
            units_duration((double)r->latency.max_ns, c, sizeof c),
            probe ? (load_entry_met(e) ? "met the bound" : "missed the bound")
                  : e->verdict.valid ? "VALID" : "INVALID",
            !probe && e->verdict.n_reasons ? " - " : "",
            !probe && e->verdict.n_reasons ? e->verdict.reasons[0] : "");
    fflush(stderr);
}

/* Runs one scenario run and books it; returns 0, or -1 when it could not start. */
static int one(struct job *job, double qps, double duration_s, const char *role)
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
    if (!job->quiet) {
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
    if (!job->quiet)
        progress(e);
    return 0;
}

/* Valid but for a late generator (judge.c gives that one reason). */
static bool valid_but_lag(const struct load_entry *e)
{
    return e->verdict.valid || (e->verdict.client_bound && e->verdict.n_reasons == 1 &&
                                e->run.client_busiest_ratio <= LOAD_BUSY_LIMIT);
}

static int find_peak(struct job *job)
{
    const struct load_job_config *o = job->asked;
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
    struct job *job = arg;
    job->stop = stop;
    if (pid > 0 && wait_ready(job) < 0)
        return 1;
    if (job->asked->find_peak)
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

json_t *load_job_command(int argc, char **argv)
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

/* The session: the server started (or the endpoint checked), the companion run beside it,
 * the result built and written. Returns the exit status (load_job_run). */
static int measure(struct job *job, const struct run_config *common,
                   const struct session_options *opts, struct session_output *out)
{
    const struct load_job_config *a = job->asked;
    char err[1024];
    struct run_config rc = {0};
    struct cmdline server = {0};
    if (a->server_cmd) {
        if (cmdline_split(&server, "--server-cmd", a->server_cmd, false, err, sizeof err) < 0) {
            log_error("load: %s", err);
            return 2;
        }
        rc.argv = server.argv;
        for (rc.argc = 0; server.argv[rc.argc]; rc.argc++)
            ;
    } else {
        int why;
        if (!ready_once(&job->target, false, &why)) {
            log_error("load: cannot connect to %s: %s (is the server running? --server-cmd "
                      "starts it)", job->target.address, strerror(why ? why : ECONNREFUSED));
            return 2;
        }
    }
    rc.runs = 1;
    rc.load = true;
    rc.grace_s = a->grace_s >= 0 ? a->grace_s : DEFAULT_GRACE_S;
    rc.label = common->label;
    rc.interval_ns = common->interval_ns;
    rc.interval_adaptive = common->interval_adaptive;
    struct session *s;
    int status = session_open(&rc, opts, &s);
    if (status == 0 && session_add(s, &rc, NULL) < 0)
        status = 2;
    if (status == 0) {
        struct live_metrics *live = session_live(s);
        if (live) { /* --serve: each query's latency on /metrics as it ends */
            job->cfg.on_query = live_on_query;
            job->cfg.on_query_arg = live;
        }
        struct session_companion comp = {.run = companion, .arg = job};
        const struct repetition *rep = session_step_with(s, 0, &comp);
        session_end_runs(s);
        if (job->refused) {
            log_error("load: %s", job->error);
            status = 2;
        } else {
            if (job->error[0])
                log_error("load: %s", job->error);
            json_t *extra = json_object();
            json_t *load = load_runs_section(&job->runs, &job->cfg, job->target.address, a->url,
                                             a->server_cmd, rep);
            json_object_set_new(load, "command", load_job_command(a->argc, a->argv));
            json_object_set_new(extra, "load", load);
            status = session_finish(s, 0, extra, out);
            json_decref(extra);
            if (status == 0 && (job->error[0] || !load_runs_valid(&job->runs)))
                status = 1;
        }
    }
    session_close(s);
    cmdline_free(&server);
    return status;
}

int load_job_run(const struct load_job_config *cfg, const struct run_config *common,
                 const struct session_options *opts, struct session_output *out)
{
    memset(out, 0, sizeof *out);
    struct job job = {.asked = cfg, .quiet = opts->quiet};
    struct load_bodies bodies = {0};
    char err[1024];
    int status = 2;
    if (plan(&job, &bodies, err, sizeof err) < 0)
        log_error("load: %s", err);
    else
        status = measure(&job, common, opts, out);
    load_runs_free(&job.runs);
    load_requests_free((struct load_request *)job.cfg.requests, job.cfg.n_requests);
    load_bodies_free(&bodies);
    load_target_free(&job.target);
    load_target_free(&job.ready);
    return status;
}
