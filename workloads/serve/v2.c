/* v2: the KServe v2 JSON bodies of serve (see v2.h), on jansson. */
#include "serve/v2.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* Deepest nesting of "data": the four dimensions of [N, C, H, W]. */
#define DATA_MAX_DEPTH 4
/* fp32 printed with 9 significant digits reads back as the same float. */
#define FLOAT_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9))

static enum v2_status fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum v2_status fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return V2_BAD_REQUEST;
}

/* A short JSON rendering of v for messages ("[1,1,28,27]"), at most len - 1 characters. */
static const char *render(const json_t *v, char *buf, size_t len)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(buf, len, "%s", s ? s : "?");
    if (s && strlen(s) >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
    free(s);
    return buf;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Counts the numbers of the row-major (flat or nested) array v into *count; depth: v's nesting.
 * A value that is not a number or an array, or arrays nested deeper than the shape, fail with a
 * message naming the flat index where they are. */
static enum v2_status count_values(const json_t *v, int depth, size_t *count, char *err,
                                   size_t errlen)
{
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) {
        if (json_is_number(e)) {
            (*count)++;
        } else if (json_is_array(e) && depth < DATA_MAX_DEPTH) {
            enum v2_status st = count_values(e, depth + 1, count, err, errlen);
            if (st)
                return st;
        } else if (json_is_array(e)) {
            return fail(err, errlen, "input '" V2_INPUT_NAME "': 'data' is nested deeper than "
                        "its %d dimensions (at value %zu)", DATA_MAX_DEPTH, *count);
        } else {
            return fail(err, errlen, "input '" V2_INPUT_NAME "': 'data' value %zu is %s; FP32 "
                        "data holds numbers", *count, type_name(e));
        }
    }
    return V2_OK;
}

/* Writes the numbers of v in order to out[*at...] (count_values checked them). */
static enum v2_status fill_values(const json_t *v, float *out, size_t *at, char *err,
                                  size_t errlen)
{
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) {
        if (json_is_array(e)) {
            enum v2_status st = fill_values(e, out, at, err, errlen);
            if (st)
                return st;
            continue;
        }
        float f = (float)json_number_value(e);
        if (!isfinite(f))
            return fail(err, errlen, "input '" V2_INPUT_NAME "': 'data' value %zu (%g) is "
                        "outside the range of FP32", *at, json_number_value(e));
        out[(*at)++] = f;
    }
    return V2_OK;
}

/* The shape [N, C, H, W] of the input: N into *n. */
static enum v2_status check_shape(const json_t *shape, const struct v2_model *m, int *n,
                                  char *err, size_t errlen)
{
    char got[96];
    const int want[4] = {0, m->channels, m->height, m->width};
    int ok = json_is_array(shape) && json_array_size(shape) == 4;
    for (size_t i = 0; ok && i < 4; i++) {
        const json_t *d = json_array_get(shape, i);
        ok = json_is_integer(d) && (i == 0 || json_integer_value(d) == want[i]);
    }
    if (!ok)
        return fail(err, errlen, "input '" V2_INPUT_NAME "': shape %s does not match the "
                    "model's [N,%d,%d,%d] (N images of %d x %d x %d, NCHW)",
                    shape ? render(shape, got, sizeof got) : "(missing)", m->channels, m->height,
                    m->width, m->channels, m->height, m->width);
    json_int_t batch = json_integer_value(json_array_get(shape, 0));
    if (batch < 1 || batch > m->max_batch)
        return fail(err, errlen, "input '" V2_INPUT_NAME "': batch %lld (the shape's first "
                    "dimension) must be from 1 to %d, the server's --max-batch",
                    (long long)batch, m->max_batch);
    *n = (int)batch;
    return V2_OK;
}

/* The binary tensor extension's data of the input (want FP32 values, little-endian, after
 * the JSON header) into out, each value checked as the JSON path checks it. */
static enum v2_status binary_values(const json_t *params, const struct v2_binary *bin,
                                    size_t want, float *out, char *err, size_t errlen)
{
    const json_t *size = json_object_get(params, "binary_data_size");
    if (!json_is_integer(size) || json_integer_value(size) < 0)
        return fail(err, errlen, "input '" V2_INPUT_NAME "': binary_data_size is %s; expected "
                    "the byte count of its binary data", type_name(size));
    size_t bytes = (size_t)json_integer_value(size);
    if (bytes != want * sizeof(float))
        return fail(err, errlen, "input '" V2_INPUT_NAME "': binary_data_size %zu, but its shape "
                    "holds %zu FP32 values, %zu bytes", bytes, want, want * sizeof(float));
    if (bin->len != bytes)
        return fail(err, errlen, "the body has %zu bytes after its JSON header "
                    "(Inference-Header-Content-Length), but input '" V2_INPUT_NAME "' declares "
                    "binary_data_size %zu", bin->len, bytes);
    for (size_t i = 0; i < want; i++) {
        const unsigned char *p = (const unsigned char *)bin->data + 4 * i;
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
        float f;
        memcpy(&f, &u, sizeof f);
        if (!isfinite(f))
            return fail(err, errlen, "input '" V2_INPUT_NAME "': binary value %zu is not a "
                        "finite number", i);
        out[i] = f;
    }
    return V2_OK;
}

/* The one input tensor: its images into req (NHWC), from "data" or from the binary data after
 * the JSON header (bin, when the body has one). */
static enum v2_status parse_input(const json_t *in, const struct v2_model *m,
                                  const struct v2_binary *bin, struct v2_request *req,
                                  char *err, size_t errlen)
{
    if (!json_is_object(in))
        return fail(err, errlen, "'inputs[0]' is %s; expected an object {\"name\": \""
                    V2_INPUT_NAME "\", \"shape\": ..., \"datatype\": \"FP32\", \"data\": ...}",
                    type_name(in));
    const json_t *name = json_object_get(in, "name");
    if (!json_is_string(name))
        return fail(err, errlen, "'inputs[0]' has no \"name\" string; this model's input is '"
                    V2_INPUT_NAME "'");
    if (strcmp(json_string_value(name), V2_INPUT_NAME) != 0)
        return fail(err, errlen, "unknown input '%.64s': this model's input is '" V2_INPUT_NAME
                    "'", json_string_value(name));
    const json_t *dtype = json_object_get(in, "datatype");
    if (!json_is_string(dtype))
        return fail(err, errlen, "input '" V2_INPUT_NAME "' has no \"datatype\" string; this "
                    "model takes FP32");
    if (strcmp(json_string_value(dtype), "FP32") != 0)
        return fail(err, errlen, "input '" V2_INPUT_NAME "': datatype '%.32s', but this model "
                    "takes FP32", json_string_value(dtype));
    const json_t *params = json_object_get(in, "parameters");
    bool binary = json_is_object(params) && json_object_get(params, "binary_data_size");
    int n = 0;
    enum v2_status st = check_shape(json_object_get(in, "shape"), m, &n, err, errlen);
    if (st)
        return st;
    const json_t *data = json_object_get(in, "data");
    if (binary && data)
        return fail(err, errlen, "input '" V2_INPUT_NAME "' has both \"data\" and "
                    "binary_data_size: send its values one way");
    if (!binary && bin->len)
        return fail(err, errlen, "the body has %zu bytes of binary data after its JSON header, "
                    "but input '" V2_INPUT_NAME "' has no binary_data_size", bin->len);
    if (!binary && !json_is_array(data))
        return fail(err, errlen, "input '" V2_INPUT_NAME "': \"data\" is %s; expected an "
                    "array of numbers (or binary data: parameters.binary_data_size)",
                    data ? type_name(data) : "missing");
    const size_t per_image = (size_t)m->channels * m->height * m->width;
    const size_t want = (size_t)n * per_image;
    size_t count = 0;
    if (!binary && (st = count_values(data, 1, &count, err, errlen)))
        return st;
    if (!binary && count != want)
        return fail(err, errlen, "input '" V2_INPUT_NAME "': shape [%d,%d,%d,%d] holds %zu "
                    "values, but \"data\" has %zu", n, m->channels, m->height, m->width, want,
                    count);
    float *nchw = malloc(want * sizeof *nchw);
    float *x = m->channels == 1 ? nchw : malloc(want * sizeof *x); /* NCHW = NHWC for C = 1 */
    if (!nchw || !x) {
        free(nchw);
        if (x != nchw)
            free(x);
        snprintf(err, errlen, "out of memory for %zu input values", want);
        return V2_NO_MEMORY;
    }
    size_t at = 0;
    if ((st = binary ? binary_values(params, bin, want, nchw, err, errlen)
                     : fill_values(data, nchw, &at, err, errlen))) {
        free(nchw);
        if (x != nchw)
            free(x);
        return st;
    }
    if (x != nchw) { /* NCHW (the protocol's, PyTorch's) to the CNN's NHWC */
        const size_t hw = (size_t)m->height * m->width;
        for (int i = 0; i < n; i++)
            for (int c = 0; c < m->channels; c++)
                for (size_t p = 0; p < hw; p++)
                    x[(size_t)i * per_image + p * m->channels + c] =
                        nchw[(size_t)i * per_image + c * hw + p];
        free(nchw);
    }
    req->n = n;
    req->x = x;
    return V2_OK;
}

/* "outputs", when given: each asks for "probabilities". */
static enum v2_status check_outputs(const json_t *outputs, char *err, size_t errlen)
{
    if (!outputs)
        return V2_OK;
    if (!json_is_array(outputs))
        return fail(err, errlen, "'outputs' is %s; expected an array such as [{\"name\": \""
                    V2_OUTPUT_NAME "\"}]", type_name(outputs));
    size_t i;
    const json_t *o;
    json_array_foreach(outputs, i, o) {
        const json_t *name = json_object_get(o, "name");
        if (!json_is_string(name))
            return fail(err, errlen, "'outputs[%zu]' has no \"name\" string; this model's "
                        "output is '" V2_OUTPUT_NAME "'", i);
        if (strcmp(json_string_value(name), V2_OUTPUT_NAME) != 0)
            return fail(err, errlen, "unknown output '%.64s': this model's output is '"
                        V2_OUTPUT_NAME "'", json_string_value(name));
    }
    return V2_OK;
}

enum v2_status v2_parse_infer(const char *body, size_t len, size_t json_len,
                              const struct v2_model *m, struct v2_request *req, char *err,
                              size_t errlen)
{
    memset(req, 0, sizeof *req);
    if (json_len > len)
        return fail(err, errlen, "Inference-Header-Content-Length %zu is more than the body's "
                    "%zu bytes", json_len, len);
    const struct v2_binary bin = {body + json_len, len - json_len};
    json_error_t je;
    json_t *root = json_loadb(body, json_len, 0, &je);
    if (!root)
        return fail(err, errlen, "malformed JSON at line %d, column %d: %s", je.line, je.column,
                    je.text);
    enum v2_status st = V2_OK;
    const json_t *id = json_object_get(root, "id"), *inputs = json_object_get(root, "inputs");
    if (!json_is_object(root))
        st = fail(err, errlen, "the body is %s; expected a JSON object {\"inputs\": [...]}",
                  type_name(root));
    else if (id && !json_is_string(id))
        st = fail(err, errlen, "'id' is %s; expected a string", type_name(id));
    else if (!inputs)
        st = fail(err, errlen, "'inputs' is missing: expected {\"inputs\": [{\"name\": \""
                  V2_INPUT_NAME "\", \"shape\": [N,%d,%d,%d], \"datatype\": \"FP32\", "
                  "\"data\": [...]}]}", m->channels, m->height, m->width);
    else if (!json_is_array(inputs))
        st = fail(err, errlen, "'inputs' is %s; expected an array of one tensor",
                  type_name(inputs));
    else if (json_array_size(inputs) != 1)
        st = fail(err, errlen, "'inputs' has %zu tensors; this model takes one, '"
                  V2_INPUT_NAME "'", json_array_size(inputs));
    if (st == V2_OK)
        st = check_outputs(json_object_get(root, "outputs"), err, errlen);
    if (st == V2_OK && id && !(req->id = strdup(json_string_value(id)))) {
        snprintf(err, errlen, "out of memory for the request's id");
        st = V2_NO_MEMORY;
    }
    if (st == V2_OK)
        st = parse_input(json_array_get(inputs, 0), m, &bin, req, err, errlen);
    json_decref(root);
    if (st != V2_OK)
        v2_request_free(req);
    return st;
}

void v2_request_free(struct v2_request *req)
{
    if (!req)
        return;
    free(req->id);
    free(req->x);
    req->id = NULL;
    req->x = NULL;
    req->n = 0;
}

/* Dumps v (a new reference, consumed: NULL allowed) to a malloc'd string. */
static char *dump(json_t *v, size_t flags, size_t *len)
{
    char *s = v ? json_dumps(v, flags) : NULL;
    json_decref(v);
    if (s && len)
        *len = strlen(s);
    return s;
}

/* [-1, a, b, c] (count dimensions after the batch one). */
static json_t *batch_shape(int count, const int *dims)
{
    json_t *a = json_array();
    json_array_append_new(a, json_integer(-1));
    for (int i = 0; i < count; i++)
        json_array_append_new(a, json_integer(dims[i]));
    return a;
}

char *v2_format_infer(const struct v2_model *m, const char *id, const float *prob, int n,
                      size_t *len)
{
    const size_t count = (size_t)n * m->classes;
    json_t *data = json_array();
    for (size_t i = 0; data && i < count; i++)
        if (json_array_append_new(data, json_real(prob[i])) != 0) {
            json_decref(data);
            data = NULL;
        }
    if (!data)
        return NULL;
    json_t *out = json_pack("{s:s, s:s, s:[{s:s, s:s, s:[i,i], s:o}]}", "model_name", m->name,
                            "model_version", "1", "outputs", "name", V2_OUTPUT_NAME, "datatype",
                            "FP32", "shape", n, m->classes, "data", data);
    if (out && id && json_object_set_new(out, "id", json_string(id)) != 0) {
        json_decref(out);
        out = NULL;
    }
    return dump(out, FLOAT_FLAGS, len);
}

char *v2_format_model_metadata(const struct v2_model *m, size_t *len)
{
    const int in[3] = {m->channels, m->height, m->width};
    json_t *v = json_pack("{s:s, s:[s], s:s, s:[{s:s, s:s, s:o}], s:[{s:s, s:s, s:o}]}",
                          "name", m->name, "versions", "1", "platform", "mlbench", "inputs",
                          "name", V2_INPUT_NAME, "datatype", "FP32", "shape",
                          batch_shape(3, in), "outputs", "name", V2_OUTPUT_NAME, "datatype",
                          "FP32", "shape", batch_shape(1, &m->classes));
    return dump(v, JSON_COMPACT, len);
}

char *v2_format_server_metadata(const char *version, size_t *len)
{
    json_t *v = json_pack("{s:s, s:s, s:[s]}", "name", "mlbench-workload serve", "version",
                          version, "extensions", "binary_tensor_data");
    return dump(v, JSON_COMPACT, len);
}

char *v2_format_error(const char *message, size_t *len)
{
    /* Messages quote what the client sent, cut to a length that may split a UTF-8 sequence:
     * such bytes become '?' (jansson takes valid UTF-8 only). */
    char *clean = strdup(message);
    if (!clean)
        return NULL;
    for (char *p = clean; *p; p++)
        if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
            *p = '?';
    char *s = dump(json_pack("{s:s}", "error", clean), JSON_COMPACT, len);
    free(clean);
    return s;
}
