/* http: serve's HTTP side on libmicrohttpd (docs/workloads.md, "serve"): the listening socket,
 * the KServe v2 endpoints (health, metadata, infer), the request bodies up to --max-body, and
 * the answers, errors included as {"error": "..."}. One thread per connection: it reads and
 * parses its request, then waits in batcher_run for the batch that computes it. */
#ifndef MLBENCH_WL_SERVE_HTTP_H
#define MLBENCH_WL_SERVE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "serve/batcher.h"
#include "serve/v2.h"

#define HTTP_DEFAULT_LISTEN "127.0.0.1:8000"

struct http_config {
    const char *listen;          /* HOST:PORT, [IPV6]:PORT or :PORT (127.0.0.1); port 0: any */
    int64_t max_body;            /* bytes of an inference request's body, at most */
    const struct v2_model *model;
    struct batcher *batcher;     /* runs the inference requests */
    const char *version;         /* the server's, for GET /v2 */
};

struct http;

/* Binds the listening address and starts serving. NULL with a message in err naming the
 * address and why; *bad_address is set to 1 when the address itself is malformed or unknown
 * (bad input), 0 when it could not be bound or the server did not start. */
struct http *http_start(const struct http_config *c, int *bad_address, char *err,
                        size_t errlen);

/* The address actually bound, "HOST:PORT" ("[ADDR]:PORT" for IPv6), with the port chosen by
 * the system for port 0. Valid until http_stop. */
const char *http_address(const struct http *h);

/* Stops accepting connections and makes the readiness checks answer 503 (the server is going
 * away); the open connections are served on. Call before batcher_stop. */
void http_quiesce(struct http *h);

/* Closes every connection, waits for their threads, frees h. After batcher_stop, so that no
 * thread is still waiting for a batch. NULL is fine. */
void http_stop(struct http *h);

#endif
