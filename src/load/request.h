/* request: what `mlbench load` sends: the target URL (http only), the bodies (files, a folder of
 * files, a JSON-lines file, or KServe v2 inference bodies built from an input shape), and the
 * complete HTTP/1.1 requests made of them (load.h's struct load_request). */
#ifndef MLBENCH_LOAD_REQUEST_H
#define MLBENCH_LOAD_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "load/load.h"

struct load_target {
    char *host;          /* as written in the URL (no brackets) */
    char *port;          /* "80" when the URL has none */
    char *path;          /* path and query, "/" when none */
    char address[300];   /* "HOST:PORT" for messages */
    struct sockaddr_storage addr;
    socklen_t addrlen;
};

/* Parses url ("http://HOST[:PORT][/PATH][?QUERY]") and resolves HOST. Returns 0, or -1 with a
 * message in err naming the bad part (https is refused: mlbench load speaks plain HTTP). */
int load_target_parse(const char *url, struct load_target *t, char *err, size_t errlen);
void load_target_free(struct load_target *t);

struct load_body {
    char *data;
    size_t len;
    size_t json_len; /* binary tensor extension: its JSON header's bytes, sent as
                      * Inference-Header-Content-Length; 0: none */
};

struct load_bodies {
    struct load_body *v;
    size_t n;
    const char *content_type; /* static; NULL: none sent unless a header says */
};

/* Adds the bodies that path holds: a regular file is one body, unless its name ends in .jsonl
 * or .ndjson, when each non-empty line is one; a folder gives each regular file in it, by name.
 * Returns 0, or -1 with a message in err (a path that does not exist, an empty JSON-lines file,
 * more than 1 GiB of bodies in all). */
int load_bodies_add_path(struct load_bodies *b, const char *path, char *err, size_t errlen);
/* Adds count KServe v2 inference request bodies (docs/load.md) for an input named name of
 * shape dims[0..n_dims) and datatype dtype ("FP32", "FP64", "INT32", "INT64", "UINT8"), filled
 * with values drawn from seed (uniform in [0, 1) for floats, [0, 100) for integers): in JSON
 * ("data"), or with binary the binary tensor extension's (a JSON header whose input has
 * parameters.binary_data_size, then the values little-endian). Returns 0, or -1 with a message
 * in err (an unknown datatype, a shape of more than 2^26 elements). */
int load_bodies_kserve(struct load_bodies *b, const char *name, const int64_t *dims, size_t n_dims,
                       const char *dtype, bool binary, size_t count, uint64_t seed, char *err,
                       size_t errlen);
void load_bodies_free(struct load_bodies *b);

/* Builds one request per body (one without a body when there is none) for method and t, with
 * the extra header lines ("Name: value", checked: no line breaks, a name of token characters;
 * Content-Length and Transfer-Encoding are mlbench's own). Returns 0 and sets *out and *n
 * (free with load_requests_free), or -1 with a message in err naming the bad header. */
int load_requests_build(const struct load_target *t, const char *method, char *const *headers,
                        size_t n_headers, const struct load_bodies *b, struct load_request **out,
                        size_t *n, char *err, size_t errlen);
void load_requests_free(struct load_request *r, size_t n);

#endif
