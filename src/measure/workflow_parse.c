/* workflow_parse: reading and validating a workflow file, workflow_load (see workflow.h and
 * docs/workflow.md); the parameters and their substitution are in workflow_template.c, the rest
 * of the API in workflow.c.
 *
 * The file is read whole and loaded as one YAML document through libyaml's document API
 * (anchors and aliases resolved), then walked with the node marks kept for messages.
 * Parameter references are validated once, at load, and turned into placeholders
 * ("\x01" INDEX "\x02") in templates kept per stage; substitution then cannot fail, so
 * --param overrides re-expand without new errors. */
#include "measure/workflow.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wordexp.h>
#include <yaml.h>

#include "measure/workflow_template.h"
#include "mlbench/marker.h"
#include "mlbench/marker_ring.h"
#include "util/fsx.h"
#include "util/strbuf.h"
#include "util/hash.h"
#include "util/xalloc.h"

#define MAX_FILE_BYTES (16u << 20) /* a workflow is a few lines; refuse anything absurd */
#define REF_OPEN "${params."

/* What the walk over one document needs. */
struct ctx {
    const char *path;
    const char *buf;       /* the file's bytes, to place references inside scalars */
    size_t len;
    yaml_document_t *doc;
    struct workflow *wf;
    char *err;
    size_t errlen;
};

/* ---- messages ---- */

__attribute__((format(printf, 4, 0)))
static void vfail_at(struct ctx *c, unsigned long line, unsigned long column, const char *fmt,
                     va_list ap)
{
    int n = snprintf(c->err, c->errlen, "%s:%lu:%lu: ", c->path, line, column);
    if (n >= 0 && (size_t)n < c->errlen)
        vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
}

/* Writes "PATH:LINE:COLUMN: message" for a libyaml mark (0-based); returns -1. */
__attribute__((format(printf, 3, 4)))
static int fail_mark(struct ctx *c, yaml_mark_t m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(c, (unsigned long)m.line + 1, (unsigned long)m.column + 1, fmt, ap);
    va_end(ap);
    return -1;
}

__attribute__((format(printf, 3, 4)))
static int fail_node(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(c, (unsigned long)n->start_mark.line + 1, (unsigned long)n->start_mark.column + 1,
             fmt, ap);
    va_end(ap);
    return -1;
}

/* Whether byte i ends a line: "\n", "\r\n" (at its "\n") or a lone "\r", as libyaml counts. */
static bool is_break(const struct ctx *c, size_t i)
{
    return c->buf[i] == '\n' || (c->buf[i] == '\r' && (i + 1 >= c->len || c->buf[i + 1] != '\n'));
}

/* Byte offset of a (0-based) line and column in the file; columns count characters, as
 * libyaml's do. Returns len when the place is past the end. */
static size_t offset_of(const struct ctx *c, size_t line, size_t column)
{
    size_t i = 0;
    for (size_t l = 0; l < line && i < c->len; i++)
        if (is_break(c, i))
            l++;
    for (size_t col = 0; i < c->len; i++) {
        if (((unsigned char)c->buf[i] & 0xC0) == 0x80)
            continue; /* UTF-8 continuation byte: same character */
        if (col++ == column)
            break;
    }
    return i < c->len ? i : c->len;
}

/* Line and column (1-based) of a byte offset. */
static void place_of(const struct ctx *c, size_t off, unsigned long *line, unsigned long *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < off && i < c->len; i++) {
        if (is_break(c, i)) {
            ++*line;
            *column = 1;
        } else if (((unsigned char)c->buf[i] & 0xC0) != 0x80 && c->buf[i] != '\r') {
            ++*column;
        }
    }
}

/* Message for the k-th (0-based) parameter reference inside scalar n: at the reference itself
 * when it is found in the file's text, at the scalar otherwise (a reference made by escapes). */
__attribute__((format(printf, 4, 5)))
static int fail_ref(struct ctx *c, const yaml_node_t *n, size_t k, const char *fmt, ...)
{
    size_t from = offset_of(c, n->start_mark.line, n->start_mark.column);
    size_t to = offset_of(c, n->end_mark.line, n->end_mark.column);
    unsigned long line = (unsigned long)n->start_mark.line + 1;
    unsigned long column = (unsigned long)n->start_mark.column + 1;
    size_t want = strlen(REF_OPEN);
    for (size_t i = from, seen = 0; i + want <= to; i++) {
        if (memcmp(c->buf + i, REF_OPEN, want) == 0 && seen++ == k) {
            place_of(c, i, &line, &column);
            break;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    vfail_at(c, line, column, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- nodes ---- */

static yaml_node_t *node(const struct ctx *c, int id)
{
    return yaml_document_get_node(c->doc, id);
}

static bool is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)n->data.scalar.value;
    return !strcmp(v, "") || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
           !strcmp(v, "NULL");
}

/* How a node's kind reads in a message: "found a list". */
static const char *kind(const yaml_node_t *n)
{
    if (is_null(n))
        return "nothing";
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a string";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

static const char *text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* Checks that scalar n holds no NUL and no control character other than tab and, when
 * newlines, line breaks. what names the value in the message. */
static int check_chars(struct ctx *c, const yaml_node_t *n, const char *what, bool newlines)
{
    if (strlen(text(n)) != n->data.scalar.length)
        return fail_node(c, n, "%s holds a NUL character", what);
    for (const unsigned char *p = n->data.scalar.value; *p; p++)
        if ((*p < 0x20 && *p != '\t' && !(newlines && (*p == '\n' || *p == '\r'))) || *p == 0x7f)
            return fail_node(c, n, "%s holds a control character (0x%02x)", what, *p);
    return 0;
}

/* A key of a mapping: a non-empty string. */
static int key_text(struct ctx *c, const yaml_node_t *k, const char *in_what, const char **out)
{
    if (k->type != YAML_SCALAR_NODE || is_null(k))
        return fail_node(c, k, "a key %s is %s: keys are names", in_what, kind(k));
    if (check_chars(c, k, "a key", false))
        return -1;
    *out = text(k);
    return 0;
}

/* Checks the keys of mapping m: each a name, none twice ("duplicate <what> 'x' <in_what>
 * (first at line N)"). Returns the number of pairs, or -1. The loops over the pairs then take
 * each key's text as it is. */
static long mapping_keys(struct ctx *c, const yaml_node_t *m, const char *what, const char *in_what)
{
    const yaml_node_pair_t *start = m->data.mapping.pairs.start, *top = m->data.mapping.pairs.top;
    /* The keys seen so far in a hash table: linear, where comparing each key with every
     * earlier one took 9.8 s for 40 000 parameters (issue 12). */
    size_t n = (size_t)(top - start), cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    const yaml_node_t **seen = xcalloc(cap, sizeof *seen);
    long rc = (long)n;
    for (const yaml_node_pair_t *p = start; p < top && rc >= 0; p++) {
        const yaml_node_t *k = node(c, p->key);
        const char *name = NULL;
        if (key_text(c, k, in_what, &name)) {
            rc = -1;
            break;
        }
        size_t i = hash_bytes(name, strlen(name)) & (cap - 1);
        for (; seen[i]; i = (i + 1) & (cap - 1))
            if (!strcmp(text(seen[i]), name)) {
                rc = fail_node(c, k, "duplicate %s '%s' %s (first at line %lu)", what, name,
                               in_what, (unsigned long)seen[i]->start_mark.line + 1);
                break;
            }
        if (rc >= 0)
            seen[i] = k;
    }
    free(seen);
    return rc;
}

/* A non-null scalar; what names it in messages ("'cwd' of stage 'x'"). */
static int want_string(struct ctx *c, const yaml_node_t *n, const char *what, bool newlines)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return fail_node(c, n, "%s must be a string, found %s", what, kind(n));
    return check_chars(c, n, what, newlines);
}

/* ---- parameters ---- */

static bool param_name_ok(const char *s, size_t n)
{
    if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static int parse_params(struct ctx *c, const yaml_node_t *m)
{
    struct workflow *wf = c->wf;
    if (is_null(m))
        return 0;
    if (m->type != YAML_MAPPING_NODE)
        return fail_node(c, m, "'params' must be a mapping of NAME: value, found %s", kind(m));
    long n = mapping_keys(c, m, "parameter", "in 'params'");
    if (n < 0)
        return -1;
    wf->params = xcalloc((size_t)n, sizeof *wf->params);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
        const char *name = text(k);
        if (!param_name_ok(name, strlen(name)))
            return fail_node(c, k, "parameter name '%s' is not valid: use letters, digits, '_' "
                             "and '-', starting with a letter or '_'", name);
        if (is_null(v))
            return fail_node(c, v, "parameter '%s' has no value: give it a default (--param "
                             "%s=VALUE overrides it)", name, name);
        if (v->type != YAML_SCALAR_NODE)
            return fail_node(c, v, "parameter '%s' must be a string or a number, found %s", name,
                             kind(v));
        if (strlen(text(v)) != v->data.scalar.length)
            return fail_node(c, v, "parameter '%s' holds a NUL character", name);
        wf->params[wf->n_params].name = xstrdup(name);
        wf->params[wf->n_params].value = xstrdup(text(v));
        wf->n_params++;
    }
    return 0;
}

/* Turns the parameter references of scalar n (its text, or s when not NULL) into
 * placeholders; fails on an unknown or malformed reference, at its place in the file. */
static int make_template(struct ctx *c, const yaml_node_t *n, const char *s, char **out)
{
    struct strbuf b = STRBUF_INIT;
    size_t k = 0;
    const char *p = s ? s : text(n);
    for (;;) {
        const char *ref = strstr(p, REF_OPEN);
        if (!ref) {
            strbuf_puts(&b, p);
            break;
        }
        strbuf_append(&b, p, (size_t)(ref - p));
        const char *name = ref + strlen(REF_OPEN);
        const char *close = strchr(name, '}');
        size_t len = close ? (size_t)(close - name) : 0;
        if (!close || !param_name_ok(name, len)) {
            strbuf_free(&b);
            return fail_ref(c, n, k, "malformed parameter reference: write ${params.NAME}");
        }
        long idx = workflow_param_find(c->wf, name, len);
        if (idx < 0) {
            char list[512];
            workflow_param_list(c->wf, list, sizeof list);
            strbuf_free(&b);
            if (!c->wf->n_params)
                return fail_ref(c, n, k, "unknown parameter '%.*s': the file declares no "
                                "'params:'", (int)len, name);
            return fail_ref(c, n, k, "unknown parameter '%.*s' (parameters: %s)", (int)len, name,
                            list);
        }
        char ph[32];
        snprintf(ph, sizeof ph, "%c%ld%c", PH_BEGIN, idx, PH_END);
        strbuf_puts(&b, ph);
        p = close + 1;
        k++;
    }
    *out = strbuf_take(&b);
    return 0;
}

/* ---- commands ---- */

/* cmd given as one string: trailing white space (a block scalar's newline) is dropped; without
 * shell, a line break inside is refused (a stage is one command) and a trial split checks the
 * syntax now rather than at the stage. */
static int parse_cmd_string(struct ctx *c, const yaml_node_t *n, const char *stage, bool shell,
                            struct workflow_stage_src *src)
{
    char what[WORKFLOW_MAX_NAME + 32];
    snprintf(what, sizeof what, "'cmd' of stage '%s'", stage);
    if (want_string(c, n, what, true))
        return -1;
    char *s = xstrdup(text(n));
    size_t len = strlen(s);
    while (len && strchr(" \t\r\n", s[len - 1]))
        s[--len] = '\0';
    if (strspn(s, " \t\r\n") == len) {
        free(s);
        return fail_node(c, n, "%s is empty: give the command to run", what);
    }
    if (!shell && strpbrk(s, "\r\n")) {
        free(s);
        return fail_node(c, n, "%s holds a line break: a stage runs one command (set 'shell: "
                         "true' to run a script, or write it on one line; '>' folds lines)", what);
    }
    int rc = make_template(c, n, s, &src->cmd);
    free(s);
    if (rc)
        return -1;
    if (!shell) {
        wordexp_t we;
        rc = workflow_split(src->cmd, &we);
        if (rc == 0)
            wordfree(&we);
        else
            return fail_node(c, n, "%s %s", what, workflow_split_why(rc));
    }
    return 0;
}

static int parse_cmd_list(struct ctx *c, const yaml_node_t *n, const char *stage,
                          struct workflow_stage_src *src)
{
    size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (count == 0)
        return fail_node(c, n, "'cmd' of stage '%s' is an empty list: give the command and its "
                         "arguments", stage);
    src->words = xcalloc(count + 1, sizeof *src->words);
    for (size_t i = 0; i < count; i++) {
        const yaml_node_t *w = node(c, n->data.sequence.items.start[i]);
        char what[WORKFLOW_MAX_NAME + 48];
        snprintf(what, sizeof what, "word %zu of 'cmd' of stage '%s'", i + 1, stage);
        if (want_string(c, w, what, true))
            return -1;
        if (i == 0 && !*text(w))
            return fail_node(c, w, "%s is empty: it is the program to run", what);
        if (make_template(c, w, NULL, &src->words[i]))
            return -1;
    }
    return 0;
}

/* ---- stages ---- */

/* A marker name: no white space or control character (checked non-empty by the caller). */
static bool stage_name_ok(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f)
            return false;
    return true;
}

static int parse_env(struct ctx *c, const yaml_node_t *m, struct workflow_stage *st)
{
    struct workflow_stage_src *src = st->src;
    if (is_null(m))
        return 0;
    if (m->type != YAML_MAPPING_NODE)
        return fail_node(c, m, "'env' of stage '%s' must be a mapping of NAME: value, found %s",
                         st->name, kind(m));
    char in_what[WORKFLOW_MAX_NAME + 32];
    snprintf(in_what, sizeof in_what, "in 'env' of stage '%s'", st->name);
    long n = mapping_keys(c, m, "variable", in_what);
    if (n < 0)
        return -1;
    src->env_names = xcalloc((size_t)n + 1, sizeof *src->env_names);
    src->env_values = xcalloc((size_t)n + 1, sizeof *src->env_values);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
        const char *name = text(k);
        if (strchr(name, '='))
            return fail_node(c, k, "variable name '%s' %s holds '='", name, in_what);
        if (!strcmp(name, MLBENCH_MARKER_SOCKET_ENV) || !strcmp(name, MLBENCH_MARKER_RING_ENV))
            return fail_node(c, k, "%s is set by mlbench: remove it from 'env' of stage '%s'",
                             name, st->name);
        char what[WORKFLOW_MAX_NAME * 2 + 32];
        snprintf(what, sizeof what, "variable '%s' %s", name, in_what);
        if (is_null(v))
            return fail_node(c, v, "%s has no value (write '' for an empty one)", what);
        if (want_string(c, v, what, true))
            return -1;
        src->env_names[st->n_env] = xstrdup(name);
        st->n_env++;
        if (make_template(c, v, NULL, &src->env_values[st->n_env - 1]))
            return -1;
    }
    return 0;
}

static int parse_bool(struct ctx *c, const yaml_node_t *n, const char *what, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE"}, *const no[] = {"false", "False",
                                                                             "FALSE"};
    if (n->type == YAML_SCALAR_NODE)
        for (size_t i = 0; i < 3; i++) {
            if (!strcmp(text(n), yes[i]) || !strcmp(text(n), no[i])) {
                *out = !strcmp(text(n), yes[i]);
                return 0;
            }
        }
    if (n->type == YAML_SCALAR_NODE && !is_null(n))
        return fail_node(c, n, "%s must be true or false, not '%s'", what, text(n));
    return fail_node(c, n, "%s must be true or false, found %s", what, kind(n));
}

/* One stage: `name: cmd-string`, `name: [words]` or `name: {cmd, cwd, env, shell}`. */
static int parse_stage(struct ctx *c, const yaml_node_t *k, const yaml_node_t *v,
                       struct workflow_stage *st)
{
    st->src = xcalloc(1, sizeof *st->src);
    st->line = (unsigned long)k->start_mark.line + 1;
    if (is_null(v))
        return fail_node(c, v, "stage '%s' has no command: give 'cmd'", st->name);
    if (v->type == YAML_SCALAR_NODE)
        return parse_cmd_string(c, v, st->name, false, st->src);
    if (v->type == YAML_SEQUENCE_NODE)
        return parse_cmd_list(c, v, st->name, st->src);

    char in_what[WORKFLOW_MAX_NAME + 16];
    snprintf(in_what, sizeof in_what, "in stage '%s'", st->name);
    if (mapping_keys(c, v, "key", in_what) < 0)
        return -1;
    const yaml_node_t *cmd = NULL, *cwd = NULL, *env = NULL, *shell = NULL;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = node(c, p->key), *val = node(c, p->value);
        const char *name = text(key);
        if (!strcmp(name, "cmd"))
            cmd = val;
        else if (!strcmp(name, "cwd"))
            cwd = val;
        else if (!strcmp(name, "env"))
            env = val;
        else if (!strcmp(name, "shell"))
            shell = val;
        else
            return fail_node(c, key, "unknown key '%s' in stage '%s' (expected: cmd, cwd, env, "
                             "shell)", name, st->name);
    }
    char what[WORKFLOW_MAX_NAME + 32];
    snprintf(what, sizeof what, "'shell' of stage '%s'", st->name);
    if (shell && parse_bool(c, shell, what, &st->shell))
        return -1;
    if (!cmd)
        return fail_node(c, v, "stage '%s' has no 'cmd': give the command to run", st->name);
    if (is_null(cmd))
        return fail_node(c, cmd, "'cmd' of stage '%s' is empty: give the command to run",
                         st->name);
    if (cmd->type == YAML_SEQUENCE_NODE) {
        if (st->shell)
            return fail_node(c, cmd, "'cmd' of stage '%s' must be one string with 'shell: true'",
                             st->name);
        if (parse_cmd_list(c, cmd, st->name, st->src))
            return -1;
    } else if (cmd->type == YAML_MAPPING_NODE) {
        return fail_node(c, cmd, "'cmd' of stage '%s' must be a string or a list of words, found "
                         "a mapping", st->name);
    } else if (parse_cmd_string(c, cmd, st->name, st->shell, st->src)) {
        return -1;
    }
    if (cwd) {
        snprintf(what, sizeof what, "'cwd' of stage '%s'", st->name);
        if (want_string(c, cwd, what, false))
            return -1;
        if (!*text(cwd))
            return fail_node(c, cwd, "%s is empty: give a directory, or leave it out to run in "
                             "the workflow file's directory", what);
        if (make_template(c, cwd, NULL, &st->src->cwd))
            return -1;
    }
    return env ? parse_env(c, env, st) : 0;
}

static int parse_stages(struct ctx *c, const yaml_node_t *m)
{
    struct workflow *wf = c->wf;
    if (is_null(m) ||
        (m->type == YAML_MAPPING_NODE && m->data.mapping.pairs.top == m->data.mapping.pairs.start))
        return fail_node(c, m, "'stages' is empty: give at least one stage (name: command)");
    if (m->type != YAML_MAPPING_NODE)
        return fail_node(c, m, "'stages' must be a mapping of stage name to stage (name: command, "
                         "or name: {cmd: ...}), found %s", kind(m));
    long n = mapping_keys(c, m, "stage", "in 'stages'");
    if (n < 0)
        return -1;
    wf->stages = xcalloc((size_t)n, sizeof *wf->stages);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
        const char *name = text(k);
        if (!*name)
            return fail_node(c, k, "a stage name is empty: give each stage a name");
        if (!stage_name_ok(name))
            return fail_node(c, k, "stage name '%s' holds white space or a control character "
                             "(it is a marker name: use '-' or '_')", name);
        if (strlen(name) > WORKFLOW_MAX_NAME)
            return fail_node(c, k, "stage name '%.32s...' is longer than %d bytes", name,
                             WORKFLOW_MAX_NAME);
        struct workflow_stage *st = &wf->stages[wf->n_stages++];
        st->name = xstrdup(name);
        if (parse_stage(c, k, v, st))
            return -1;
    }
    return 0;
}

static int parse_root(struct ctx *c, const yaml_node_t *root)
{
    if (root->type != YAML_MAPPING_NODE)
        return fail_node(c, root, "a workflow is a mapping with 'stages:' (and optional "
                         "'params:'), found %s (see docs/workflow.md)", kind(root));
    if (mapping_keys(c, root, "key", "at the top") < 0)
        return -1;
    const yaml_node_t *params = NULL, *stages = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = node(c, p->key);
        const char *name = text(k);
        if (!strcmp(name, "params"))
            params = node(c, p->value);
        else if (!strcmp(name, "stages"))
            stages = node(c, p->value);
        else
            return fail_node(c, k, "unknown key '%s' (expected: params, stages)", name);
    }
    if (params && parse_params(c, params))
        return -1;
    if (!stages)
        return fail_node(c, root, "no 'stages:': a workflow needs at least one stage "
                         "(see docs/workflow.md)");
    return parse_stages(c, stages);
}

/* ---- loading ---- */

static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    char *text = fsx_read_file(path, MAX_FILE_BYTES, len);
    if (!text && errno == EFBIG)
        snprintf(err, errlen, "cannot read workflow '%s': larger than %u MiB", path,
                 MAX_FILE_BYTES >> 20);
    else if (!text)
        snprintf(err, errlen, "cannot read workflow '%s': %s", path, strerror(errno));
    return text;
}

/* libyaml's message, at the place it gives (reader errors give a byte offset). */
static void parser_error(struct ctx *c, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "not valid YAML";
    if (p->error == YAML_READER_ERROR) {
        unsigned long line, column;
        place_of(c, p->problem_offset, &line, &column);
        snprintf(c->err, c->errlen, "%s:%lu:%lu: %s (the file must be UTF-8 text)", c->path,
                 line, column, problem);
    } else if (p->error == YAML_MEMORY_ERROR) {
        snprintf(c->err, c->errlen, "%s: out of memory while parsing", c->path);
    } else if (p->context) {
        fail_mark(c, p->problem_mark, "%s (%s at line %lu, column %lu)", problem, p->context,
                  (unsigned long)p->context_mark.line + 1,
                  (unsigned long)p->context_mark.column + 1);
    } else {
        fail_mark(c, p->problem_mark, "%s", problem);
    }
}

/* The absolute directory that holds path. */
static char *dir_of(const char *path, char *err, size_t errlen)
{
    char *copy = xstrdup(path);
    char *real = realpath(dirname(copy), NULL);
    if (!real)
        snprintf(err, errlen, "cannot resolve the directory of workflow '%s': %s", path,
                 strerror(errno));
    free(copy);
    return real;
}

struct workflow *workflow_load(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *buf = read_file(path, &len, err, errlen);
    if (!buf)
        return NULL;
    struct workflow *wf = xcalloc(1, sizeof *wf);
    wf->path = xstrdup(path);
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    struct ctx c = {.path = path, .buf = buf, .len = len, .doc = &doc, .wf = wf, .err = err,
                    .errlen = errlen};
    int ok = -1;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory while parsing", path);
        free(buf);
        workflow_free(wf);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&parser, &doc)) {
        parser_error(&c, &parser);
        goto out_parser;
    }
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        snprintf(err, errlen, "%s:1:1: the file is empty: a workflow needs 'stages:' (see "
                 "docs/workflow.md)", path);
        goto out_doc;
    }
    if (!yaml_parser_load(&parser, &extra)) {
        parser_error(&c, &parser);
        goto out_doc;
    }
    const yaml_node_t *second = yaml_document_get_root_node(&extra);
    if (second)
        fail_mark(&c, extra.start_mark, "a second YAML document: a workflow file holds one");
    yaml_document_delete(&extra);
    if (second)
        goto out_doc;
    if (!(wf->dir = dir_of(path, err, errlen)) || parse_root(&c, root))
        goto out_doc;
    workflow_expand(wf);
    ok = 0;
out_doc:
    yaml_document_delete(&doc);
out_parser:
    yaml_parser_delete(&parser);
    free(buf);
    if (ok) {
        workflow_free(wf);
        return NULL;
    }
    return wf;
}
