/* load_job: the measuring session of `mlbench load` (docs/load.md): the plan built from what
 * was asked (the scenario, its rules, the requests; checked against each other), the server
 * started and measured like a workload of `mlbench run` when there is a command for it (its
 * readiness awaited), the load generator (src/load/) running beside it as the session's
 * companion (session.h): one scenario run, or find-peak's probes and confirmations; then the
 * result with its "load" section (load_runs.h) written like a run's. Call from the main
 * thread, once per process (it opens a measuring session). */
#ifndef MLBENCH_SESSION_LOAD_JOB_H
#define MLBENCH_SESSION_LOAD_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "session/session.h"
#include "measure/run_config.h"

/* What the job was asked, as given (docs/load.md names each one's option). Zero, NULL or a
 * negative number where noted: not given, the default is the job's. */
struct load_job_config {
    const char *url;                 /* the endpoint */
    const char *scenario;            /* single-stream (NULL), multi-stream, server or offline */
    const char *qps;                 /* server: arrivals per second, as written; or NULL */
    bool find_peak;                  /* server: the largest rate that meets latency_bound */
    double probe_s;                  /* find-peak: a probe's length; 0: min_duration_s / 10
                                      * within 2 s .. 30 s */
    const char *latency_bound;       /* a duration as written ("15ms"), or NULL */
    double percentile;               /* the latency metric; <= 0: 90 single-stream, else 99 */
    int samples_per_query;           /* multi-stream; 0: 8 */
    double min_duration_s;           /* 0: 60 s */
    long long min_queries;           /* <= 0: 100 */
    int connections, threads;        /* 0: the scenario's (threads: 1) */
    double request_timeout_s;        /* 0: 10 s */
    long long seed;                  /* server's arrivals; < 0: random (recorded) */
    const char *method;              /* NULL: GET, or POST with a body */
    char **headers;                  /* "Name: value" lines sent with each request */
    size_t n_headers;
    char **bodies;                   /* body files, folders or .jsonl files */
    size_t n_bodies;
    const char *kserve;              /* KServe v2 inference requests for this model, or NULL */
    const char *input_shape, *input_dtype, *input_name; /* of the KServe bodies; NULL: 1,1,28,28,
                                      * FP32, input */
    bool kserve_binary;              /* the KServe values as binary tensor data */
    const char *server_cmd;          /* a command line that starts the server, or NULL */
    const char *ready_url;           /* a URL that answers 2xx once the server is ready, or NULL
                                      * (its port accepting a connection) */
    double ready_timeout_s;          /* 0: 60 s */
    double grace_s;                  /* SIGTERM to SIGKILL of the server; < 0: 5 s (this, the
                                      * ready URL and timeout are refused without server_cmd) */
    int argc;                        /* the command line recorded in the result (load.command), */
    char **argv;                     /* a credential's header value left out; argv[0] is the verb */
};

/* Runs the job cfg in a session of opts (store, output, --serve, quiet) that measures as
 * common says (its label and sampling; its command, runs and grace are the job's, the rest is
 * ignored). Says on stderr what is wrong (bad or conflicting settings, an endpoint that
 * refuses) and, unless opts->quiet, each scenario run as it ends. Returns mlbench load's exit
 * status: 0 every run that counts VALID, 1 INVALID or the job failed midway, 2 bad input or the
 * endpoint refused before the start (nothing ran), 3 the result could not be written; out is
 * filled in every case (out->doc: the result document, or NULL): free it with
 * session_output_free. */
int load_job_run(const struct load_job_config *cfg, const struct run_config *common,
                 const struct session_options *opts, struct session_output *out);

/* The command line argv[0..argc) as the result records it (load.command): ["mlbench", the
 * words...], each made valid UTF-8, the value of a header that carries a credential
 * (Authorization, Cookie, an API key, a name with token, secret, password or key in it) given
 * with -H or --header replaced by REDACTED, since results are shared. New reference. */
json_t *load_job_command(int argc, char **argv);

#endif
