/* workflow_template: the stages' templates (see workflow_template.h): the parameters, their
 * substitution into the placeholders, and the split of a command string into words.
 *
 * Templates hold placeholders ("\x01" INDEX "\x02") made at load; substitution cannot fail,
 * so --param overrides re-expand without new errors. Command strings are split by wordexp on
 * the template, so a parameter value is put into a word after the split and is never
 * re-parsed. */
#include "measure/workflow_template.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wordexp.h>

#include "measure/cmdline.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- parameters ---- */

long workflow_param_find(const struct workflow *wf, const char *name, size_t n)
{
    for (size_t i = 0; i < wf->n_params; i++)
        if (strlen(wf->params[i].name) == n && !strncmp(wf->params[i].name, name, n))
            return (long)i;
    return -1;
}

/* "a, b, c" (shortened to fit), or NULL when there are none. */
void workflow_param_list(const struct workflow *wf, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < wf->n_params && used + 8 < outlen; i++) {
        int n = snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", wf->params[i].name);
        if (n < 0 || (size_t)n >= outlen - used) {
            snprintf(out + used, outlen - used, ", ...");
            break;
        }
        used += (size_t)n;
    }
}

/* The template with its placeholders replaced by the current parameter values. */
char *workflow_substitute(const struct workflow *wf, const char *tmpl)
{
    struct strbuf b = STRBUF_INIT;
    for (const char *p = tmpl; *p;) {
        const char *ph = strchr(p, PH_BEGIN);
        if (!ph) {
            strbuf_puts(&b, p);
            break;
        }
        strbuf_append(&b, p, (size_t)(ph - p));
        char *end;
        unsigned long idx = strtoul(ph + 1, &end, 10);
        /* Placeholders are only made by make_template, on a valid index. */
        if (*end == PH_END && idx < wf->n_params) {
            strbuf_puts(&b, wf->params[idx].value);
            p = end + 1;
        } else {
            strbuf_append(&b, ph, 1);
            p = ph + 1;
        }
    }
    return strbuf_take(&b);
}

/* ---- commands ---- */

/* Why wordexp refused a command line (rc != 0), for "'cmd' of stage 'x' <why>". */
const char *workflow_split_why(int rc)
{
    switch (rc) {
    case WRDE_BADCHAR:
        return "holds a shell operator (| & ; < > ( ) { }): set 'shell: true' to run it through "
               "/bin/sh, or give cmd as a list of words";
    case WRDE_CMDSUB:
        return "uses command substitution: set 'shell: true' to run it through /bin/sh";
    case WORKFLOW_SPLIT_PATTERN:
        return "holds a pattern only a shell expands (* ? [ ] or ~): set 'shell: true' to run it "
               "through /bin/sh, or quote it";
    case WORKFLOW_SPLIT_UNSET_ERROR:
        return "uses ${VAR?} or ${VAR:?} (fail when unset), which only a shell does: set 'shell: "
               "true' to run it through /bin/sh, or use ${VAR:-default}";
    case WRDE_SYNTAX:
        return "has a syntax error (unbalanced quotes?)";
    case WRDE_NOSPACE:
        return "could not be split into words (out of memory)";
    default:
        return "could not be split into words";
    }
}

/* Whether s may hold a ${...?...} expansion (fail when unset): a '?' between a "${" and the next
 * '}'. glibc's wordexp dereferences a null pointer on ${UNSET?} with no word (fuzz_workflow
 * found it, also inside another expansion's word: "${p-'x ${Q?}"), and failing when unset is a
 * shell's error anyway. Quotes are not looked at, on purpose: wordexp's reading of a word inside
 * ${...} does not follow the outer quoting, so a '?' in braces is refused even where a shell
 * would not expand it (a command that needs one sets 'shell: true'). */
static bool has_unset_error(const char *s)
{
    for (const char *p = strstr(s, "${"); p; p = strstr(p + 2, "${")) {
        const char *end = strchr(p + 2, '}');
        const char *q = strchr(p + 2, '?');
        if (q && (!end || q < end))
            return true;
    }
    return false;
}

int workflow_split(const char *s, wordexp_t *we)
{
    /* wordexp alone lets an operator after a pattern through ("rm cache/STAR; cat x", STAR a
     * '*', became one rm of three words): the shell's characters are looked for first. */
    char found;
    switch (cmdline_shellism(s, true, &found)) {
    case CMDLINE_OPERATOR:
    case CMDLINE_VARIABLE: /* cannot happen: variables are allowed */
        return WRDE_BADCHAR;
    case CMDLINE_SUBST:
        return WRDE_CMDSUB;
    case CMDLINE_PATTERN:
        return WORKFLOW_SPLIT_PATTERN;
    case CMDLINE_PLAIN:
        break;
    }
    if (has_unset_error(s))
        return WORKFLOW_SPLIT_UNSET_ERROR;
    int rc = wordexp(s, we, WRDE_NOCMD);
    if (rc == WRDE_NOSPACE)
        wordfree(we); /* wordexp may have allocated part of the vector */
    return rc;
}

/* ---- expansion ---- */

void workflow_stage_clear(struct workflow_stage *st)
{
    free(st->cwd);
    st->cwd = NULL;
    if (st->env)
        for (size_t i = 0; i < st->n_env; i++)
            free(st->env[i]);
    free(st->env);
    st->env = NULL;
}

/* Substitutes the parameters into cwd and env of every stage. */
void workflow_expand(struct workflow *wf)
{
    for (size_t i = 0; i < wf->n_stages; i++) {
        struct workflow_stage *st = &wf->stages[i];
        workflow_stage_clear(st);
        if (!st->src->cwd) {
            st->cwd = xstrdup(wf->dir);
        } else {
            char *d = workflow_substitute(wf, st->src->cwd);
            if (d[0] == '/')
                st->cwd = d;
            else {
                st->cwd = strcmp(d, ".") ? xasprintf("%s/%s", wf->dir, d) : xstrdup(wf->dir);
                free(d);
            }
        }
        st->env = xcalloc(st->n_env + 1, sizeof *st->env);
        for (size_t k = 0; k < st->n_env; k++) {
            char *v = workflow_substitute(wf, st->src->env_values[k]);
            st->env[k] = xasprintf("%s=%s", st->src->env_names[k], v);
            free(v);
        }
    }
}
