/* cmd_load: `mlbench load [options] URL`: drives an HTTP inference endpoint with one of MLPerf
 * LoadGen's scenarios, optionally starting the server itself (--server-cmd), and writes one
 * result document with a "load" section (docs/load.md). The command parses its options, runs
 * the job (session/load_job.h) and prints the result (export/load_text.h, or --json). */
#include <stdio.h>
#include <stdlib.h>

#include "session/session.h"
#include "session/load_job.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "export/load_text.h"
#include "measure/sampler.h"
#include "store/store.h"
#include "util/log.h"

/* The prose of --help, above and below the options (the rows of parse). */
static const char usage_text[] =
    "Usage: mlbench load [options] URL\n"
    "\n"
    "Drives an HTTP endpoint (an inference server) with one of MLPerf LoadGen's scenarios and\n"
    "measures latency from each query's scheduled time, so a stalled server is not hidden.\n"
    "The result goes to the store like a run's (mlbench history, show, compare, report).\n";
static const char tail_text[] =
    "Exit status: 0 every scenario run VALID, 1 INVALID (or the server failed), 2 bad input or\n"
    "the endpoint refused the connection before the start, 3 the result could not be written.\n";

/* The job's settings (session/load_job.h) and what the command alone uses. */
struct load_options {
    struct load_job_config job;
    const char *label, *output, *store, *serve;
    bool json, quiet;
    int64_t interval_ns;
    struct strvec headers, bodies; /* -H and --body-file (copies) */
};

/* Returns true when the command goes on; false with the exit status in *status (after the
 * help or the message). */
static bool parse(int argc, char **argv, struct load_options *o, int *status)
{
    const struct cli_option table[] = {
        CLI_OPT_STRING("scenario", 0, &o->job.scenario, CLI_NONEMPTY, "needs a scenario",
                       .metavar = "S", .group = "Scenario:",
                       .help = "single-stream (default: one query at a time, metric p90), "
                               "multi-stream (N samples per query, p99), server (Poisson "
                               "arrivals at --qps, p99) or offline (every connection busy: "
                               "throughput)"),
        CLI_OPT_STRING("qps", 0, &o->job.qps, CLI_NONEMPTY, "needs a rate", .metavar = "N",
                       .help = "server: arrivals per second"),
        CLI_OPT_FLAG("find-peak", 0, &o->job.find_peak,
                     .help = "server: the largest QPS whose percentile meets --latency-bound "
                             "(doubling and bisecting short probes, then a full-length run)"),
        CLI_OPT_SECONDS("probe-duration", 0, &o->job.probe_s, 0.1, 3600, 0,
                        "is not a duration from 100ms to 1h", .metavar = "D",
                        .help = "find-peak: length of a probe (default a tenth of "
                                "--min-duration, 2s..30s)"),
        CLI_OPT_STRING("latency-bound", 0, &o->job.latency_bound, CLI_NONEMPTY,
                       "needs a duration", .metavar = "D",
                       .help = "e.g. 15ms: the run is INVALID when the percentile is above it"),
        CLI_OPT_NUMBER("percentile", 0, &o->job.percentile, 0, 100, CLI_OPEN_MIN | CLI_OPEN_MAX,
                       "is not a percentile between 0 and 100 (exclusive), e.g. 99",
                       .metavar = "P",
                       .help = "the latency metric, 0 < P < 100 (default 90 single-stream, "
                               "else 99)"),
        CLI_OPT_INTEGER("samples-per-query", 0, &o->job.samples_per_query, 1, 1024, 0,
                        "is not a count from 1 to 1024", .metavar = "N",
                        .help = "multi-stream (default 8)"),
        CLI_OPT_SECONDS("min-duration", 0, &o->job.min_duration_s, 0, 7 * 86400.0, CLI_OPEN_MIN,
                        "is not a positive duration (e.g. 60s, 500ms)", .metavar = "D",
                        .help = "issue queries at least this long (default 60s)"),
        CLI_OPT_INTEGER("min-queries", 0, &o->job.min_queries, 1, 1000000000000LL, 0,
                        "is not a count (1 or more)", .metavar = "N",
                        .help = "and at least this many (default 100)"),
        CLI_OPT_INTEGER("connections", 'c', &o->job.connections, 1, 10000, 0,
                        "is not a count from 1 to 10000", .metavar = "N",
                        .help = "keep-alive connections (default 1 single-stream, N "
                                "multi-stream, 16 offline, 64 server)"),
        CLI_OPT_INTEGER("threads", 't', &o->job.threads, 1, 256, 0,
                        "is not a count from 1 to 256", .metavar = "N",
                        .help = "generator threads (default 1)"),
        CLI_OPT_SECONDS("request-timeout", 0, &o->job.request_timeout_s, 0, 3600, CLI_OPEN_MIN,
                        "is not a positive duration up to 1h", .metavar = "D",
                        .help = "a response later than this counts as an error (default 10s)"),
        CLI_OPT_INTEGER("seed", 0, &o->job.seed, 0, INT64_MAX, 0,
                        "is not a seed (a whole number >= 0)", .metavar = "N",
                        .help = "seed of the server scenario's arrivals (default: random, "
                                "recorded)"),
        CLI_OPT_STRING("method", 'X', &o->job.method, CLI_NONEMPTY, "needs a method, e.g. POST",
                       .metavar = "M", .group = "Requests:",
                       .help = "HTTP method (default GET, POST with a body)"),
        CLI_OPT_STRINGS("header", 'H', &o->headers, CLI_NONEMPTY, NULL, "needs 'Name: value'",
                        .metavar = "'N: V'", .help = "an extra header (repeatable)"),
        CLI_OPT_STRINGS("body-file", 0, &o->bodies, CLI_NONEMPTY, NULL, "needs a file name",
                        .metavar = "PATH",
                        .help = "a body; repeat to cycle several; a folder gives each file in "
                                "it, a .jsonl file one body per line"),
        CLI_OPT_STRING("kserve", 0, &o->job.kserve, CLI_NONEMPTY, "needs a model name",
                       .metavar = "MODEL",
                       .help = "KServe v2 / Triton inference requests: POST "
                               "/v2/models/MODEL/infer with bodies built from the options "
                               "below"),
        CLI_OPT_STRING("input-shape", 0, &o->job.input_shape, CLI_NONEMPTY,
                       "needs a shape, e.g. 1,1,28,28", .metavar = "S",
                       .help = "the preset's input shape (default 1,1,28,28)"),
        CLI_OPT_STRING("input-dtype", 0, &o->job.input_dtype, CLI_NONEMPTY,
                       "needs a datatype, e.g. FP32", .metavar = "T",
                       .help = "FP32 (default), FP64, INT32, INT64, UINT8"),
        CLI_OPT_STRING("input-name", 0, &o->job.input_name, CLI_NONEMPTY, "needs a name",
                       .metavar = "N", .help = "the input's name (default input)"),
        CLI_OPT_FLAG("kserve-binary", 0, &o->job.kserve_binary,
                     .help = "the preset's values as binary tensor data after a JSON header "
                             "(Inference-Header-Content-Length), not JSON numbers"),
        CLI_OPT_STRING("server-cmd", 0, &o->job.server_cmd, CLI_NOT_BLANK, "needs a command",
                       .metavar = "CMD", .group = "Server:",
                       .help = "start the server (its own process group, sampled, its markers "
                               "received) and stop it afterwards"),
        CLI_OPT_STRING("ready-url", 0, &o->job.ready_url, CLI_NONEMPTY, "needs a URL",
                       .metavar = "URL",
                       .help = "wait until a GET of URL answers 2xx (default: until URL's port "
                               "accepts a connection)"),
        CLI_OPT_SECONDS("ready-timeout", 0, &o->job.ready_timeout_s, 0, 86400, CLI_OPEN_MIN,
                        "is not a positive duration (e.g. 60s)", .metavar = "D",
                        .help = "how long to wait for it (default 60s)"),
        CLI_OPT_SECONDS("grace", 0, &o->job.grace_s, 0, 3600, 0, "is not a duration up to 1h",
                        .metavar = "D",
                        .help = "SIGTERM to SIGKILL when stopping it (default 5s)"),
        CLI_OPT_STRING("label", 'l', &o->label, CLI_NOT_BLANK, "needs a label",
                       .metavar = "LABEL", .group = "Output:", .help = "label of the result"),
        CLI_OPT_STRING("output", 'o', &o->output, CLI_NONEMPTY, "needs a file name",
                       .metavar = "FILE", .help = "also write the result document to FILE"),
        CLI_OPT_FLAG("json", 0, &o->json,
                     .help = "print the result document instead of the summary"),
        CLI_OPT_NANOSECONDS("interval", 0, &o->interval_ns, SAMPLER_MIN_INTERVAL_NS,
                            SAMPLER_MAX_INTERVAL_NS, "is not a duration from 10ms to 10s",
                            .metavar = "D",
                            .help = "resource sampling interval (default: adaptive)"),
        CLI_OPT_LISTEN("serve", &o->serve, .metavar = "ADDR",
                       .help = "Prometheus /metrics while it runs"),
        CLI_OPT_STORE(&o->store),
        CLI_OPT_FLAG("quiet", 'q', &o->quiet, .help = "no progress lines"),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "load", .options = table, .usage = usage_text,
                                      .tail = tail_text};
    struct cli_args args;
    if (!cli_parse_args(&parser, argc, argv, &args, status))
        return false;
    if (args.n != 1) {
        if (args.n)
            log_error("load: one URL only (got '%s' and '%s')", args.v[0], args.v[1]);
        else
            log_error("load: no URL: give the endpoint to drive, e.g. "
                      "http://127.0.0.1:8000/v2/models/cnn/infer");
        *status = 2;
        return false;
    }
    o->job.url = args.v[0];
    return true;
}

int cmd_load(int argc, char **argv)
{
    struct load_options o = {.job = {.seed = -1, .grace_s = -1, .argc = argc, .argv = argv}};
    int status;
    if (!parse(argc, argv, &o, &status)) {
        strvec_free(&o.headers);
        strvec_free(&o.bodies);
        return status;
    }
    o.job.headers = o.headers.v;
    o.job.n_headers = o.headers.n;
    o.job.bodies = o.bodies.v;
    o.job.n_bodies = o.bodies.n;
    struct run_config common = {
        .label = o.label,
        .interval_ns = o.interval_ns ? o.interval_ns : SAMPLER_DEFAULT_INTERVAL_NS,
        .interval_adaptive = o.interval_ns == 0,
    };
    struct session_options session = {
        .store = o.store ? o.store : store_default_dir(),
        .output = o.output,
        .serve = o.serve,
        .quiet = o.quiet,
    };
    struct session_output out;
    status = load_job_run(&o.job, &common, &session, &out);
    if (out.doc) {
        if (o.json)
            json_dumpf(out.doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS), fputc('\n', stdout);
        else
            export_load_print(stdout, out.doc, out.path);
    }
    session_output_free(&out);
    strvec_free(&o.headers);
    strvec_free(&o.bodies);
    return status;
}
