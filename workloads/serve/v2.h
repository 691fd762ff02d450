/* v2: the KServe v2 / Triton JSON protocol of serve (docs/workloads.md, "serve"): parsing an
 * inference request's body into images, and writing the bodies of the inference response, the
 * model's and the server's metadata and the errors. Pure (jansson only), thread-safe: the HTTP
 * threads call it concurrently. Bodies are JSON text (malloc'd, not NUL-terminated when a length
 * is returned, free with free()). */
#ifndef MLBENCH_WL_SERVE_V2_H
#define MLBENCH_WL_SERVE_V2_H

#include <stddef.h>

/* What the protocol says about the model: its name, and its input (NCHW, FP32) and output
 * (classes probabilities, FP32) shapes, the batch dimension left out. */
struct v2_model {
    const char *name;                     /* "cnn" */
    int channels, height, width, classes; /* the CNN's shape */
    int max_batch;                        /* images one request may hold (--max-batch) */
};

#define V2_INPUT_NAME "input"
#define V2_OUTPUT_NAME "probabilities"

/* One parsed inference request. */
struct v2_request {
    char *id; /* its "id" (malloc'd), echoed in the response; NULL when it had none */
    int n;    /* images, 1..max_batch */
    float *x; /* the n images in the CNN's layout, NHWC (malloc'd, n*H*W*C floats) */
};

/* The binary data after a body's JSON header (the binary tensor extension). */
struct v2_binary {
    const char *data;
    size_t len;
};

/* v2_parse_infer's failures. */
enum v2_status {
    V2_OK = 0,
    V2_BAD_REQUEST = -1, /* the body is wrong: answer 400 with err */
    V2_NO_MEMORY = -2,   /* the images could not be allocated: answer 500 with err */
};

/* Parses an inference request body of len bytes whose first json_len bytes are JSON (len when
 * it is all JSON),
 *   {"id": "...", "inputs": [{"name": "input", "shape": [N, C, H, W], "datatype": "FP32",
 *    "data": [...]}], "outputs": [{"name": "probabilities"}], "parameters": {...}}
 * ("id", "outputs" and "parameters" optional; "data" row-major NCHW, flat or nested; numbers),
 * into *req, converting the images to NHWC. With the binary tensor extension (KServe v2,
 * Triton: the request's Inference-Header-Content-Length is json_len) the input has
 * "parameters": {"binary_data_size": B} and no "data", and its B bytes after the JSON are the
 * FP32 values, little-endian, row-major NCHW. V2_OK, or a v2_status with a message in err that
 * names what is wrong (malformed JSON with its line and column, a missing or unknown field, the
 * shape, the datatype, the element count, a value that is not a number or not finite in fp32, a
 * batch above m->max_batch); on failure nothing is left allocated in *req. */
enum v2_status v2_parse_infer(const char *body, size_t len, size_t json_len,
                              const struct v2_model *m, struct v2_request *req, char *err,
                              size_t errlen);
/* Frees what req holds (NULL and an already freed request are fine). */
void v2_request_free(struct v2_request *req);

/* The body of the inference response for n images whose probabilities are prob (n x classes):
 *   {"model_name": "cnn", "model_version": "1", "id": "..." (when id is not NULL),
 *    "outputs": [{"name": "probabilities", "datatype": "FP32", "shape": [n, classes],
 *    "data": [...]}]}
 * with each value printed to round-trip as fp32. NULL when memory is short. */
char *v2_format_infer(const struct v2_model *m, const char *id, const float *prob, int n,
                      size_t *len);
/* The model's metadata (GET /v2/models/NAME): name, versions, platform "mlbench", inputs
 * [{"input", FP32, [-1, C, H, W]}], outputs [{"probabilities", FP32, [-1, classes]}]. */
char *v2_format_model_metadata(const struct v2_model *m, size_t *len);
/* The server's metadata (GET /v2): name, version, extensions. */
char *v2_format_server_metadata(const char *version, size_t *len);
/* {"error": message}. NULL when memory is short. */
char *v2_format_error(const char *message, size_t *len);

#endif
