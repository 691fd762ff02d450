/* reproduce.c: the command that makes a result again (export_reproduce_command, export.h): "mlbench
 * run" with the options its config kept, the recorded `mlbench load` command, or the command
 * that ran an in-process timer; and the shell quoting its words go through. */
#include "export/export.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

char *export_shell_quote(const char *s)
{
    bool plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                       "_@%+=:,./-", *p) != NULL;
    if (plain)
        return xstrdup(s);
    size_t quotes = 0;
    for (const char *p = s; *p; p++)
        quotes += *p == '\'';
    char *q = xmalloc(strlen(s) + 3 * quotes + 3);
    char *w = q;
    *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    *w++ = '\'';
    *w = '\0';
    return q;
}

static void sb_word(struct strbuf *b, const char *word)
{
    char *q = export_shell_quote(word);
    strbuf_puts(b, " ");
    strbuf_puts(b, q);
    free(q);
}

/* A time in seconds as an option value: "2.5s". */
static void sb_seconds(struct strbuf *b, const char *option, double s)
{
    char v[48];
    snprintf(v, sizeof v, "%.9gs", s);
    sb_word(b, option);
    sb_word(b, v);
}

char *export_shell_join(const char *const *words, size_t n)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *w = words[i];
        char *q = export_shell_quote(w ? w : "");
        strbuf_printf(&b, "%s%s", i ? " " : "", q);
        free(q);
    }
    return strbuf_take(&b);
}

/* A load result repeats the mlbench load command it recorded (load.command; results from
 * before it have none: then what the load section says, the rest left to the user). */
static char *load_command(const struct doc_load *load)
{
    if (load->n_command)
        return export_shell_join(load->command, load->n_command);
    struct strbuf b = STRBUF_INIT;
    strbuf_puts(&b, "mlbench load --scenario");
    sb_word(&b, str_or(load->scenario, "single-stream"));
    if (load->server_cmd) {
        sb_word(&b, "--server-cmd");
        sb_word(&b, load->server_cmd);
    }
    sb_word(&b, str_or(load->url, "URL"));
    return strbuf_take(&b);
}

char *export_reproduce_command(const struct doc_result *result, const struct doc_load *load)
{
    if (load && load->present)
        return load_command(load);
    struct strbuf b = STRBUF_INIT;
    const struct doc_config *cfg = &result->config;
    char v[48];
    if (doc_result_recorded(result)) {
        /* timed in-process (mlbench record): the command that ran the timer, run again */
        for (size_t i = 0; i < result->n_argv; i++) {
            const char *word = result->argv[i];
            char *q = export_shell_quote(word ? word : "?");
            if (b.len)
                strbuf_puts(&b, " ");
            strbuf_puts(&b, q);
            free(q);
        }
        if (!b.len)
            strbuf_puts(&b, "?");
        return strbuf_take(&b);
    }
    strbuf_puts(&b, "mlbench run");
    if (cfg->runs > 0) {
        snprintf(v, sizeof v, "%lld", cfg->runs);
        sb_word(&b, "-r");
        sb_word(&b, v);
    }
    if (cfg->warmup > 0) {
        snprintf(v, sizeof v, "%lld", cfg->warmup);
        sb_word(&b, "-w");
        sb_word(&b, v);
    }
    if (isfinite(cfg->timeout_s))
        sb_seconds(&b, "--timeout", cfg->timeout_s);
    if (isfinite(cfg->grace_s) && fabs(cfg->grace_s - 2.0) > 1e-9)
        sb_seconds(&b, "--grace", cfg->grace_s);
    /* An interval the user chose is repeated; the adaptive default (config.interval_adaptive,
     * absent in older results, whose default was a fixed 100 ms) is not. */
    long long interval = cfg->interval_ns;
    if (cfg->interval_adaptive >= 0 ? !cfg->interval_adaptive : interval != 100000000) {
        if (interval % 1000000 == 0)
            snprintf(v, sizeof v, "%lldms", interval / 1000000);
        else
            snprintf(v, sizeof v, "%.9gs", (double)interval / 1e9);
        sb_word(&b, "--interval");
        sb_word(&b, v);
    }
    const struct {
        const char *value, *option;
    } strings[] = {{cfg->prepare, "--prepare"}, {cfg->cleanup, "--cleanup"}};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        if (strings[i].value) {
            sb_word(&b, strings[i].option);
            sb_word(&b, strings[i].value);
        }
    }
    const struct {
        bool set;
        const char *option;
    } flags[] = {{cfg->fail_fast, "--fail-fast"}, {cfg->show_output, "--show-output"},
                 {cfg->all_gpus, "--all-gpus"}, {cfg->discard_throttled, "--discard-throttled"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].set)
            sb_word(&b, flags[i].option);
    double threshold = cfg->throttle_threshold; /* a share; 0.75 by default */
    if (isfinite(threshold) && fabs(threshold - 0.75) > 1e-9) {
        snprintf(v, sizeof v, "%.6g", 100 * threshold);
        sb_word(&b, "--throttle-threshold");
        sb_word(&b, v);
    }
    if (result->shell)
        sb_word(&b, "--shell");
    if (result->label) {
        sb_word(&b, "-l");
        sb_word(&b, result->label);
    }
    strbuf_puts(&b, " --");
    for (size_t i = 0; i < result->n_argv; i++)
        sb_word(&b, result->argv[i] ? result->argv[i] : "");
    return strbuf_take(&b);
}
