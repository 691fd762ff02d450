/* fuzz_options: the command line's parsers. Input: a mode byte, then NUL-separated words.
 *   mode % 4 == 0  run_options_parse("run" WORDS...)
 *   mode % 4 == 1  cli_options_parse over a table with a row of every kind
 *   mode % 4 == 2  units: units_parse_long, units_parse_seconds, units_duration, units_bytes,
 *                  units_utf8_valid / _sanitize on each word
 *   mode % 4 == 3  cmdline_shellism and cmdline_split (without and with --shell) on each word
 * Host names of --serve are not looked up (getaddrinfo below): nothing leaves the machine. */
#include <dlfcn.h>
#include <math.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/run_options.h"
#include "fuzz_util.h"
#include "measure/cmdline.h"
#include "measure/run_config.h"
#include "util/units.h"

/* Numeric hosts only ("localhost" comes from /etc/hosts): a fuzzed name must not become a DNS
 * query. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
    struct addrinfo h = hints ? *hints : (struct addrinfo){0};
    if (!node || strcmp(node, "localhost") != 0)
        h.ai_flags |= AI_NUMERICHOST;
    return real(node, service, &h, res);
}

#define MAX_WORDS 64

static void run_parser(int argc, char **argv)
{
    struct run_options o;
    char err[1024];
    if (run_options_parse(argc, argv, &o, err, sizeof err) < 0 && !err[0])
        abort(); /* a refusal names the bad value */
    run_options_free(&o);
}

static int store_call(void *dest, const char *value, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    *(const char **)dest = value;
    return value[0] == 'x' ? -1 : 0;
}

static void table_parser(int argc, char **argv)
{
    bool flag = false;
    const char *s = NULL, *call = NULL;
    struct strvec many = STRVEC_INIT;
    int i = 0;
    unsigned u = 0;
    long l = 0;
    unsigned long ul = 0;
    long long ll = 0;
    unsigned long long ull = 0;
    double d = 0, pct = 0, secs = 0;
    int64_t ns = 0;
    const struct cli_option table[] = {
        CLI_OPT_FLAG("flag", 'f', &flag),
        CLI_OPT_STRING("string", 's', &s, CLI_NOT_BLANK, NULL),
        CLI_OPT_STRINGS("many", 'm', &many, CLI_NONEMPTY, NULL, "is not a thing"),
        CLI_OPT_INTEGER("int", 'i', &i, -5, 100, 0, NULL),
        CLI_OPT_INTEGER("uint", 'u', &u, 0, 4000000000LL, CLI_C_INTEGER, NULL),
        CLI_OPT_INTEGER("long", 0, &l, -1000000, 1000000, 0, NULL),
        CLI_OPT_INTEGER("ulong", 0, &ul, 1, INT64_MAX, CLI_C_INTEGER, NULL),
        CLI_OPT_INTEGER("llong", 0, &ll, INT64_MIN, INT64_MAX, 0, NULL),
        CLI_OPT_INTEGER("ullong", 0, &ull, 0, INT64_MAX, CLI_C_INTEGER, NULL),
        CLI_OPT_NUMBER("double", 'd', &d, -1, 1, CLI_OPEN_MIN | CLI_OPEN_MAX, NULL),
        CLI_OPT_MIN_EFFECT(&pct),
        CLI_OPT_SECONDS("seconds", 0, &secs, 0, 3600, CLI_OPEN_MIN, NULL),
        CLI_OPT_NANOSECONDS("ns", 0, &ns, 1000, INT64_MAX, NULL),
        CLI_OPT_CALL("call", 'c', &call, store_call, "is refused"),
        CLI_OPT_END,
    };
    /* no usage text: --help prints nothing */
    const struct cli_parser p = {.verb = "fuzz", .options = table,
                                 .flags = (unsigned)argc & CLI_STOP_AT_ARG, .usage = NULL};
    struct cli_args args;
    char err[1024];
    if (cli_options_parse(&p, argc, argv, &args, err, sizeof err) == CLI_ERROR && !err[0])
        abort();
    if (isnan(d) || isnan(secs) || isnan(pct) || (d != 0 && (d <= -1 || d >= 1)) ||
        secs < 0 || secs > 3600 || i < -5 || i > 100)
        abort(); /* a value outside its range was kept */
    strvec_free(&many);
}

static void units(char **w, int n)
{
    for (int k = 0; k < n; k++) {
        long l;
        double v;
        char buf[64];
        if (units_parse_long(w[k], -1000, 1000, &l) == 0 && (l < -1000 || l > 1000))
            abort();
        if (units_parse_seconds(w[k], &v) == 0 && !(isfinite(v) && v >= 0))
            abort();
        v = strtod(w[k], NULL);
        units_duration(v, buf, sizeof buf);
        units_bytes(v, buf, sizeof buf);
        size_t len = strlen(w[k]);
        char *clean = units_utf8_sanitize(w[k], len);
        if (strlen(clean) != len || !units_utf8_valid(clean, len))
            abort();
        free(clean);
    }
}

static void cmdlines(char **w, int n)
{
    for (int k = 0; k < n; k++) {
        char found, err[1024];
        (void)cmdline_shellism(w[k], k & 1, &found);
        for (int shell = 0; shell < 2; shell++) {
            struct cmdline c;
            if (cmdline_split(&c, "--prepare", w[k], shell, err, sizeof err) == 0) {
                if (!c.argv)
                    abort();
                cmdline_free(&c);
            } else if (!err[0]) {
                abort();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *v[MAX_WORDS + 2], *buf;
    v[0] = data[0] % 4 < 2 ? "run" : "";
    int n = fuzz_split(data + 1, size - 1, '\0', v + 1, MAX_WORDS, &buf);
    switch (data[0] % 4) {
    case 0:
        run_parser(n + 1, v);
        break;
    case 1:
        table_parser(n + 1, v);
        break;
    case 2:
        units(v + 1, n);
        break;
    default:
        cmdlines(v + 1, n);
        break;
    }
    free(buf);
    return 0;
}
