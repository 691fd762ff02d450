/* fuzz_v2: the reference server's parser of KServe v2 inference requests (workloads/serve/v2.c,
 * what `mlbench-workload serve` runs on every POST /v2/models/cnn/infer). The input's first
 * byte b says where its JSON ends, as a request's Inference-Header-Content-Length would: b = 0
 * all of it is JSON, else the JSON is the first (b - 1) * len / 254 bytes of the rest and the
 * bytes after it the binary tensor data. A request that parses must hold n images of the
 * model's shape, 1 <= n <= max_batch, every value finite; one that fails must say why. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/v2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const struct v2_model m = {"cnn", 1, 4, 4, 3, 4};
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    size_t json_len = data[0] == 0 ? len : (size_t)(data[0] - 1) * len / 254;
    struct v2_request rq;
    char err[512];
    enum v2_status st = v2_parse_infer(body, len, json_len, &m, &rq, err, sizeof err);
    if (st == V2_OK) {
        if (rq.n < 1 || rq.n > m.max_batch || !rq.x)
            abort();
        for (size_t i = 0; i < (size_t)rq.n * 16; i++)
            if (!isfinite(rq.x[i]))
                abort();
    } else if (!err[0]) {
        abort();
    }
    v2_request_free(&rq);
    return 0;
}
