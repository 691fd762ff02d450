/* load: one scenario run of `mlbench load` against an HTTP endpoint (docs/load.md), and what
 * it measured. The generator keeps --connections keep-alive connections to one address, on
 * epoll, in --threads threads, and issues queries as the scenario says (MLPerf LoadGen's
 * meanings, loadgen/test_settings.h):
 *   single-stream  one query outstanding; the next is issued when the previous one returns;
 *   multi-stream   queries of samples_per_query requests issued together on as many
 *                  connections; the next query when every sample of the previous returned;
 *   server         Poisson arrivals at qps; a query due while every connection is busy waits
 *                  for one, and its latency counts from its due time (no coordinated omission);
 *   offline        every connection busy all the time (all samples are available at once).
 * Latency is measured from the query's due time (its issue time in the closed-loop scenarios)
 * to the end of its response, on CLOCK_MONOTONIC. */
#ifndef MLBENCH_LOAD_H
#define MLBENCH_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "load/histogram.h"

enum load_scenario { LOAD_SINGLE_STREAM, LOAD_MULTI_STREAM, LOAD_SERVER, LOAD_OFFLINE };

/* "single-stream", "multi-stream", "server", "offline". */
const char *load_scenario_name(enum load_scenario s);
/* The scenario of a name above; returns -1 when it is none of them. */
int load_scenario_parse(const char *name);

/* A complete HTTP/1.1 request, ready to write (request line, headers, body). */
struct load_request {
    char *bytes;
    size_t len;
    size_t body_len;
};

struct load_config {
    enum load_scenario scenario;
    struct sockaddr_storage addr; /* where to connect */
    socklen_t addrlen;
    const char *address;          /* the same, for messages ("127.0.0.1:8000") */
    const struct load_request *requests; /* cycled in order; borrowed */
    size_t n_requests;
    int connections;              /* in all (single-stream: 1) */
    int threads;                  /* generator threads, each with its share of connections */
    double qps;                   /* server: the arrival rate */
    int samples_per_query;        /* multi-stream */
    double min_duration_s;        /* issue queries for at least this long ... */
    uint64_t min_queries;         /* ... and at least this many */
    double request_timeout_s;     /* a response later than this is an error (timeout) */
    uint64_t seed;                /* server: the schedule's seed (thread t uses seed + t) */
    volatile const int *abort;    /* when it becomes nonzero, stop issuing and drain; may be NULL */
    /* Called on a generator thread as each query ends (latency from its due time; ok false:
     * it failed); may be NULL. Must be thread-safe and quick (`--serve`: live_on_query). */
    void (*on_query)(void *arg, int64_t latency_ns, bool ok);
    void *on_query_arg;
};

/* Queries that did not succeed, by kind. */
#define LOAD_STATUS_CODES 600
struct load_errors {
    uint64_t status[LOAD_STATUS_CODES]; /* responses with a status other than 2xx, by code */
    uint64_t timeout;                   /* no response within request_timeout_s */
    uint64_t reset;                     /* the connection closed or failed before the response */
    uint64_t connect;                   /* a connection could not be (re)opened */
    uint64_t protocol;                  /* the response did not parse as HTTP/1.x */
};

/* One second of the run, by completion time. Percentiles are exact with one thread; with
 * several, the threads' own percentiles weighted by their counts (docs/load.md). */
struct load_second {
    uint64_t completed;  /* successful queries */
    uint64_t failed;
    int64_t p50_ns, p90_ns, p99_ns, max_ns;
};

struct load_run {
    enum load_scenario scenario;
    double target_qps;         /* server; 0 otherwise */
    int64_t start_ns;          /* CLOCK_MONOTONIC when issuing began */
    int64_t issue_end_ns;      /* when the last query was issued */
    int64_t end_ns;            /* when the last response came (or the drain gave up) */
    int64_t start_unix_ns;
    uint64_t issued;           /* queries (multi-stream: of samples_per_query requests each) */
    uint64_t completed;        /* queries that succeeded */
    uint64_t failed;           /* queries with at least one error */
    uint64_t requests;         /* HTTP requests sent */
    struct load_errors errors; /* by request */
    struct hist latency;       /* successful queries, from the due time */
    struct hist response;      /* successful requests, from the moment each was written: what
                                * a closed-loop tool reports */
    struct hist send_lag;      /* how late the generator wrote each request after it could */
    struct load_second *seconds; /* by second since start_ns; owned */
    size_t n_seconds;
    double client_cpu_s;       /* CPU time of the generator threads */
    double client_busiest_ratio; /* the busiest generator thread's CPU time over the run's wall */
    uint64_t reconnects;       /* connections opened after the first ones */
    uint64_t bytes_sent, bytes_received;
    bool interrupted;          /* stopped early through config.abort */
};

/* Runs one scenario as cfg says and fills *run (free with load_run_free). Returns 0 when the
 * scenario ran (whatever the server answered), or -1 with a message in err when it could not
 * start: no connection could be opened at all (the message names the address and the error).
 * Call from a thread that can block for the run's duration; signals are not touched. */
int load_execute(const struct load_config *cfg, struct load_run *run, char *err, size_t errlen);
void load_run_free(struct load_run *run);
/* Adds part (one generator thread's run, started at part->start_ns) into run, whose start_ns
 * is already the earliest: counts, errors and histograms added, seconds aligned on run's start
 * (their percentiles weighted by count), the end times the latest. */
void load_run_merge(struct load_run *run, const struct load_run *part);

/* Seconds from the first issue to the last response. */
double load_run_duration_s(const struct load_run *run);
/* Successful queries per second over that time (0 when it is 0). */
double load_run_throughput(const struct load_run *run);
/* Every request error added up. */
uint64_t load_errors_total(const struct load_errors *e);

#endif
