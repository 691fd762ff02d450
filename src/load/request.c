/* request: the target URL, the bodies and the HTTP/1.1 requests of `mlbench load`
 * (request.h). URLs are split by http-parser's URL parser; host names resolved by getaddrinfo. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <http_parser.h>

#include "load/request.h"
#include "load/schedule.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define MAX_BODY_BYTES ((size_t)1 << 30) /* all bodies together */
#define MAX_KSERVE_ELEMENTS ((int64_t)1 << 26)

static char *field(const char *url, const struct http_parser_url *u, int f)
{
    if (!(u->field_set & (1 << f)))
        return NULL;
    return xstrndup(url + u->field_data[f].off, u->field_data[f].len);
}

int load_target_parse(const char *url, struct load_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (strncasecmp(url, "https://", 8) == 0) {
        snprintf(err, errlen, "'%s': https is not supported: mlbench load speaks plain HTTP "
                 "(point it at the server's http port, or at a TLS terminator's)", url);
        return -1;
    }
    if (http_parser_parse_url(url, strlen(url), 0, &u) != 0 || !(u.field_set & (1 << UF_HOST)) ||
        !(u.field_set & (1 << UF_SCHEMA))) {
        snprintf(err, errlen, "'%s' is not a URL mlbench load can use: write http://HOST[:PORT]/PATH", url);
        return -1;
    }
    char *schema = field(url, &u, UF_SCHEMA);
    bool http = strcasecmp(schema, "http") == 0;
    free(schema);
    if (!http) {
        snprintf(err, errlen, "'%s': only http:// URLs are supported", url);
        return -1;
    }
    if (u.field_set & (1 << UF_USERINFO)) {
        snprintf(err, errlen, "'%s': credentials in the URL are not supported: send them with "
                 "-H 'Authorization: ...'", url);
        return -1;
    }
    t->host = field(url, &u, UF_HOST);
    t->port = (u.field_set & (1 << UF_PORT)) ? field(url, &u, UF_PORT) : xstrdup("80");
    struct strbuf path = STRBUF_INIT;
    if (u.field_set & (1 << UF_PATH))
        strbuf_printf(&path, "%.*s", (int)u.field_data[UF_PATH].len, url + u.field_data[UF_PATH].off);
    else
        strbuf_puts(&path, "/");
    if (u.field_set & (1 << UF_QUERY))
        strbuf_printf(&path, "?%.*s", (int)u.field_data[UF_QUERY].len, url + u.field_data[UF_QUERY].off);
    t->path = strbuf_take(&path);
    bool v6 = strchr(t->host, ':') != NULL;
    snprintf(t->address, sizeof t->address, v6 ? "[%s]:%s" : "%s:%s", t->host, t->port);

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(t->host, t->port, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(err, errlen, "'%s': cannot resolve host '%s': %s", url, t->host, gai_strerror(rc));
        load_target_free(t);
        return -1;
    }
    memcpy(&t->addr, res->ai_addr, res->ai_addrlen);
    t->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

void load_target_free(struct load_target *t)
{
    free(t->host);
    free(t->port);
    free(t->path);
    t->host = t->port = t->path = NULL;
}

static size_t bodies_bytes(const struct load_bodies *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++)
        n += b->v[i].len;
    return n;
}

static void bodies_push(struct load_bodies *b, char *data, size_t len)
{
    b->v = xreallocarray(b->v, (b->n + 1), sizeof *b->v);
    b->v[b->n].data = data;
    b->v[b->n].len = len;
    b->v[b->n].json_len = 0;
    b->n++;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "body file '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct strbuf sb = STRBUF_INIT;
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (sb.len + k > MAX_BODY_BYTES) {
            snprintf(err, errlen, "body file '%s' is larger than 1 GiB", path);
            fclose(f);
            strbuf_free(&sb);
            return NULL;
        }
        strbuf_append(&sb, chunk, k);
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "body file '%s': read error", path);
        strbuf_free(&sb);
        return NULL;
    }
    *len = sb.len;
    return strbuf_take(&sb);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int add_file(struct load_bodies *b, const char *path, char *err, size_t errlen)
{
    size_t len;
    char *data = read_file(path, &len, err, errlen);
    if (!data)
        return -1;
    if (!ends_with(path, ".jsonl") && !ends_with(path, ".ndjson")) {
        bodies_push(b, data, len);
    } else {
        size_t before = b->n;
        for (char *line = data, *end = data + len; line < end;) {
            char *nl = memchr(line, '\n', (size_t)(end - line));
            size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
            size_t m = n;
            while (m > 0 && (line[m - 1] == '\r' || line[m - 1] == ' ' || line[m - 1] == '\t'))
                m--;
            if (m > 0)
                bodies_push(b, xstrndup(line, m), m);
            line += n + 1;
        }
        free(data);
        if (b->n == before) {
            snprintf(err, errlen, "body file '%s' holds no bodies (a JSON-lines file has one per line)", path);
            return -1;
        }
    }
    if (bodies_bytes(b) > MAX_BODY_BYTES) {
        snprintf(err, errlen, "the bodies add up to more than 1 GiB (at '%s')", path);
        return -1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int load_bodies_add_path(struct load_bodies *b, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "body file '%s': %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return add_file(b, path, err, errlen);
    DIR *d = opendir(path);
    if (!d) {
        snprintf(err, errlen, "body folder '%s': %s", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = xreallocarray(names, (n + 1), sizeof *names);
        names[n++] = xasprintf("%s/%s", path, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc = add_file(b, names[i], err, errlen);
            added++;
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && added == 0) {
        snprintf(err, errlen, "body folder '%s' holds no files", path);
        return -1;
    }
    return rc;
}

/* Appends v as the little-endian bytes of an element of size bytes (a float or double's
 * pattern, or an integer's). */
static void put_le(struct strbuf *sb, uint64_t v, int size)
{
    char bytes[8];
    for (int i = 0; i < size; i++)
        bytes[i] = (char)(v >> (8 * i));
    strbuf_append(sb, bytes, (size_t)size);
}

static void put_binary(struct strbuf *sb, double u, const char *dtype)
{
    if (!strcmp(dtype, "FP32")) {
        float f = (float)(1.0 - u);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        put_le(sb, bits, 4);
    } else if (!strcmp(dtype, "FP64")) {
        double d = 1.0 - u;
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        put_le(sb, bits, 8);
    } else {
        int size = !strcmp(dtype, "INT32") ? 4 : !strcmp(dtype, "INT64") ? 8 : 1;
        put_le(sb, (uint64_t)((int)(u * 100) % 100), size);
    }
}

int load_bodies_kserve(struct load_bodies *b, const char *name, const int64_t *dims, size_t n_dims,
                       const char *dtype, bool binary, size_t count, uint64_t seed, char *err,
                       size_t errlen)
{
    static const char *const types[] = {"FP32", "FP64", "INT32", "INT64", "UINT8"};
    static const int sizes[] = {4, 8, 4, 8, 1};
    bool known = false, integer = false;
    int size = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dtype, types[i]) == 0) {
            known = true;
            integer = i >= 2;
            size = sizes[i];
        }
    if (!known) {
        snprintf(err, errlen, "input datatype '%s' is not one the KServe preset builds: use FP32, "
                 "FP64, INT32, INT64 or UINT8", dtype);
        return -1;
    }
    int64_t elements = 1;
    for (size_t i = 0; i < n_dims; i++) {
        if (dims[i] <= 0 || elements > MAX_KSERVE_ELEMENTS / dims[i]) {
            snprintf(err, errlen, "input shape: each dimension must be positive and the input at "
                     "most 2^26 elements");
            return -1;
        }
        elements *= dims[i];
    }
    uint64_t state = seed;
    for (size_t k = 0; k < count; k++) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_printf(&sb, "{\"inputs\":[{\"name\":\"%s\",\"shape\":[", name);
        for (size_t i = 0; i < n_dims; i++)
            strbuf_printf(&sb, "%s%lld", i ? "," : "", (long long)dims[i]);
        if (binary) {
            strbuf_printf(&sb, "],\"datatype\":\"%s\",\"parameters\":{\"binary_data_size\":"
                          "%lld}}]}", dtype, (long long)(elements * size));
            size_t json_len = sb.len;
            for (int64_t i = 0; i < elements; i++)
                put_binary(&sb, schedule_uniform(&state), dtype);
            size_t len = sb.len;
            bodies_push(b, strbuf_take(&sb), len);
            b->v[b->n - 1].json_len = json_len;
            continue;
        }
        strbuf_printf(&sb, "],\"datatype\":\"%s\",\"data\":[", dtype);
        for (int64_t i = 0; i < elements; i++) {
            double u = schedule_uniform(&state);
            if (integer)
                strbuf_printf(&sb, "%s%d", i ? "," : "", (int)(u * 100) % 100);
            else
                strbuf_printf(&sb, "%s%.4f", i ? "," : "", 1.0 - u);
        }
        strbuf_puts(&sb, "]}]}");
        size_t len = sb.len;
        bodies_push(b, strbuf_take(&sb), len);
    }
    b->content_type = binary ? "application/octet-stream" : "application/json";
    return 0;
}

void load_bodies_free(struct load_bodies *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].data);
    free(b->v);
    b->v = NULL;
    b->n = 0;
}

/* Checks one "Name: value" header; returns the length of its name, or 0 when it is bad. */
static size_t header_name_len(const char *h)
{
    size_t i = 0;
    while (h[i] && (isalnum((unsigned char)h[i]) || strchr("!#$%&'*+-.^_`|~", h[i])))
        i++;
    if (i == 0 || h[i] != ':')
        return 0;
    for (const char *p = h; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return 0;
    return i;
}

static bool has_header(char *const *headers, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (strncasecmp(headers[i], name, len) == 0 && headers[i][len] == ':')
            return true;
    return false;
}

int load_requests_build(const struct load_target *t, const char *method, char *const *headers,
                        size_t n_headers, const struct load_bodies *b, struct load_request **out,
                        size_t *n, char *err, size_t errlen)
{
    for (const char *p = method; *p; p++)
        if (!isupper((unsigned char)*p)) {
            snprintf(err, errlen, "method '%s': write it in capitals, e.g. GET or POST", method);
            return -1;
        }
    if (!*method || strcmp(method, "HEAD") == 0 || strcmp(method, "CONNECT") == 0) {
        snprintf(err, errlen, "method '%s' is not supported: use GET, POST, PUT, PATCH or DELETE", method);
        return -1;
    }
    for (size_t i = 0; i < n_headers; i++) {
        size_t k = header_name_len(headers[i]);
        if (k == 0) {
            snprintf(err, errlen, "header '%s' is not 'Name: value' on one line", headers[i]);
            return -1;
        }
        if ((k == 14 && strncasecmp(headers[i], "Content-Length", 14) == 0) ||
            (k == 17 && strncasecmp(headers[i], "Transfer-Encoding", 17) == 0) ||
            (k == 10 && strncasecmp(headers[i], "Connection", 10) == 0)) {
            snprintf(err, errlen, "header '%.*s' is set by mlbench load itself: leave it out", (int)k,
                     headers[i]);
            return -1;
        }
    }
    size_t count = b->n ? b->n : 1;
    struct load_request *r = xcalloc(count, sizeof *r);
    bool v6 = strchr(t->host, ':') != NULL;
    for (size_t i = 0; i < count; i++) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_printf(&sb, "%s %s HTTP/1.1\r\n", method, t->path);
        if (!has_header(headers, n_headers, "Host"))
            strbuf_printf(&sb, v6 ? "Host: [%s]:%s\r\n" : "Host: %s:%s\r\n", t->host, t->port);
        if (!has_header(headers, n_headers, "User-Agent"))
            strbuf_printf(&sb, "User-Agent: mlbench-load/%s\r\n", MLBENCH_VERSION);
        if (b->content_type && b->n && !has_header(headers, n_headers, "Content-Type"))
            strbuf_printf(&sb, "Content-Type: %s\r\n", b->content_type);
        for (size_t h = 0; h < n_headers; h++)
            strbuf_printf(&sb, "%s\r\n", headers[h]);
        size_t body = b->n ? b->v[i].len : 0;
        if (b->n && b->v[i].json_len)
            strbuf_printf(&sb, "Inference-Header-Content-Length: %zu\r\n", b->v[i].json_len);
        if (b->n || strcmp(method, "GET") != 0)
            strbuf_printf(&sb, "Content-Length: %zu\r\n", body);
        strbuf_puts(&sb, "\r\n");
        if (body)
            strbuf_append(&sb, b->v[i].data, body);
        r[i].len = sb.len;
        r[i].body_len = body;
        r[i].bytes = strbuf_take(&sb);
    }
    *out = r;
    *n = count;
    return 0;
}

void load_requests_free(struct load_request *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(r[i].bytes);
    free(r);
}
