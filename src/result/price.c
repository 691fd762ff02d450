/* price: parsing prices and price files, and matching a price file against a result's machine
 * (see price.h; the rules are in docs/cost.md). */
#include "result/price.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "util/xalloc.h"

int price_parse_currency(const char *text, char out[4])
{
    if (!text || strlen(text) != 3)
        return -1;
    for (int i = 0; i < 3; i++) {
        if (!isalpha((unsigned char)text[i]) || (unsigned char)text[i] > 127)
            return -1;
        out[i] = (char)toupper((unsigned char)text[i]);
    }
    out[3] = '\0';
    return 0;
}

/* A decimal number (digits, one point, an exponent): what strtod reads, minus hex, nan, inf. */
static bool plain_number(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789.eE+-", s[i]))
            return false;
    return n > 0;
}

/* Reads the number at the start of text: its end in *end. Returns 0, or -1. */
static int read_number(const char *text, double *v, const char **end)
{
    const char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strspn(s, "0123456789.eE+-");
    /* "3.5EUR" would read the 'E' as an exponent: an exponent needs a digit or sign after it. */
    for (size_t i = 0; i < n; i++)
        if ((s[i] == 'e' || s[i] == 'E') &&
            !(i + 1 < n && (isdigit((unsigned char)s[i + 1]) || s[i + 1] == '+' ||
                            s[i + 1] == '-'))) {
            n = i;
            break;
        }
    if (!plain_number(s, n))
        return -1;
    char buf[64];
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *e;
    errno = 0;
    *v = strtod(buf, &e);
    if (*e || errno == ERANGE)
        return -1;
    *end = s + n;
    return 0;
}

static bool price_in_range(double v)
{
    return isfinite(v) && v > 0 && v <= PRICE_MAX_PER_HOUR;
}

int price_parse(const char *text, double *per_hour, char currency[4], char *err, size_t errlen)
{
    const char *end = NULL;
    double v = NAN;
    /* "3,5" or "3.5$" is a bad number, not a bad currency: a code starts with a letter. */
    if (!text || read_number(text, &v, &end) < 0 || !price_in_range(v) ||
        (*end && !isalpha((unsigned char)end[strspn(end, " \t")]))) {
        snprintf(err, errlen, "'%s' is not a price per hour: give a number above 0 (at most "
                 "%g), optionally with a currency code, e.g. 3.50, 3.5USD, '2.1 EUR'",
                 text ? text : "", PRICE_MAX_PER_HOUR);
        return -1;
    }
    while (*end == ' ' || *end == '\t')
        end++;
    char code[4];
    if (!*end) {
        snprintf(code, sizeof code, "%s", PRICE_DEFAULT_CURRENCY);
    } else {
        char tail[8] = "";
        size_t n = strlen(end);
        while (n > 0 && (end[n - 1] == ' ' || end[n - 1] == '\t'))
            n--;
        if (n < sizeof tail)
            memcpy(tail, end, n);
        if (n >= sizeof tail || price_parse_currency(tail, code) < 0) {
            snprintf(err, errlen, "'%s' has a bad currency '%.*s': give a three-letter code "
                     "such as USD or EUR after the number (e.g. '2.1 EUR')", text,
                     (int)(n < 40 ? n : 40), end);
            return -1;
        }
    }
    *per_hour = v;
    memcpy(currency, code, 4);
    return 0;
}

int price_spec_from_price(struct price_spec *spec, const char *text, char *err, size_t errlen)
{
    memset(spec, 0, sizeof *spec);
    return price_parse(text, &spec->per_hour, spec->currency, err, errlen);
}

void price_spec_free(struct price_spec *spec)
{
    if (!spec)
        return;
    for (size_t i = 0; i < spec->n_entries; i++)
        free(spec->entries[i].name);
    free(spec->entries);
    free(spec->file);
    memset(spec, 0, sizeof *spec);
}

/* The text of a scalar node, or NULL for other nodes. */
static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A value of the file that must be a price per hour (a plain number, no currency). */
static int entry_price(const char *name, const char *key, const yaml_node_t *v, double *out,
                       char *err, size_t errlen)
{
    const char *s = scalar(v);
    const char *end = NULL;
    double p = NAN;
    if (!s || read_number(s, &p, &end) < 0 || *end || !price_in_range(p)) {
        snprintf(err, errlen, "%s:%zu: %s%s%s of '%s' is not a price per hour: give a number "
                 "above 0 (the currency goes in 'currency:')", name,
                 (size_t)(v ? v->start_mark.line + 1 : 0), s ? "'" : "",
                 s ? s : v && v->type == YAML_MAPPING_NODE ? "(a mapping)" : "(a list)",
                 s ? "'" : "", key);
        return -1;
    }
    *out = p;
    return 0;
}

static int parse_document(struct price_spec *spec, const char *name, yaml_document_t *doc,
                          char *err, size_t errlen)
{
    const yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        snprintf(err, errlen, "%s: a price file is a mapping of machine names to prices per "
                 "hour (e.g. 'NVIDIA H100: 3.50'), with optional 'currency:' and 'default:'",
                 name);
        return -1;
    }
    bool have_currency = false, have_default = false;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = yaml_document_get_node(doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(doc, p->value);
        const char *key = scalar(k);
        size_t line = k ? k->start_mark.line + 1 : 0;
        if (!key || !*key) {
            snprintf(err, errlen, "%s:%zu: a machine name must be a non-empty text", name, line);
            return -1;
        }
        bool dup = (!strcmp(key, "currency") && have_currency) ||
                   (!strcmp(key, "default") && have_default);
        for (size_t i = 0; i < spec->n_entries && !dup; i++)
            dup = !strcmp(spec->entries[i].name, key);
        if (dup) {
            snprintf(err, errlen, "%s:%zu: '%s' is given twice: give each machine once", name,
                     line, key);
            return -1;
        }
        if (!strcmp(key, "currency")) {
            if (price_parse_currency(scalar(v), spec->currency) < 0) {
                snprintf(err, errlen, "%s:%zu: currency '%s' is not a three-letter code such "
                         "as USD or EUR", name, line, scalar(v) ? scalar(v) : "(not a text)");
                return -1;
            }
            have_currency = true;
        } else if (!strcmp(key, "default")) {
            if (entry_price(name, key, v, &spec->default_per_hour, err, errlen) < 0)
                return -1;
            have_default = true;
        } else {
            double per_hour;
            if (entry_price(name, key, v, &per_hour, err, errlen) < 0)
                return -1;
            spec->entries = xreallocarray(spec->entries, spec->n_entries + 1,
                                          sizeof *spec->entries);
            spec->entries[spec->n_entries++] = (struct price_entry){xstrdup(key), per_hour};
        }
    }
    if (spec->n_entries == 0 && !have_default) {
        snprintf(err, errlen, "%s: no machine and no 'default:': give at least one price per "
                 "hour", name);
        return -1;
    }
    return 0;
}

int price_spec_parse_file_text(struct price_spec *spec, const char *name, const char *text,
                               size_t len, char *err, size_t errlen)
{
    memset(spec, 0, sizeof *spec);
    snprintf(spec->currency, sizeof spec->currency, "%s", PRICE_DEFAULT_CURRENCY);
    spec->file = xstrdup(name);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory while parsing", name);
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = -1;
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "%s:%zu:%zu: %s: fix the YAML (docs/cost.md shows a price file)",
                 name, (size_t)parser.problem_mark.line + 1,
                 (size_t)parser.problem_mark.column + 1,
                 parser.problem ? parser.problem : "not valid YAML");
    } else {
        rc = parse_document(spec, name, &doc, err, errlen);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int price_spec_load_file(struct price_spec *spec, const char *path, char *err, size_t errlen)
{
    memset(spec, 0, sizeof *spec);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read price file '%s': %s", path, strerror(errno));
        return -1;
    }
    char *buf = xmalloc(PRICE_FILE_MAX_BYTES + 1);
    size_t len = fread(buf, 1, PRICE_FILE_MAX_BYTES + 1, f);
    bool bad = ferror(f);
    fclose(f);
    int rc = -1;
    if (bad)
        snprintf(err, errlen, "cannot read price file '%s'", path);
    else if (len > PRICE_FILE_MAX_BYTES)
        snprintf(err, errlen, "price file '%s' is over %d bytes: is it the right file?", path,
                 PRICE_FILE_MAX_BYTES);
    else
        rc = price_spec_parse_file_text(spec, path, buf, len, err, errlen);
    free(buf);
    return rc;
}

/* The machine's descriptions, in the order they are tried. */
struct description {
    char field[40];
    const char *value;
};

static size_t descriptions(const struct machine_facts *m, struct description *d, size_t max)
{
    size_t n = 0;
    if (!m)
        return 0;
    if (m->hostname[0] && n < max)
        d[n++] = (struct description){"hostname", m->hostname};
    for (size_t i = 0; i < m->sources.n_gpus && n < max; i++) {
        const char *s = m->sources.gpus[i].name;
        if (*s) {
            d[n] = (struct description){"", s};
            snprintf(d[n].field, sizeof d[n].field, "gpus[%zu].name", i);
            n++;
        }
    }
    if (m->cpu_model[0] && n < max)
        d[n++] = (struct description){"cpu.model", m->cpu_model};
    if (m->vm[0] && strcmp(m->vm, "none") && strcmp(m->vm, "unknown") && n < max)
        d[n++] = (struct description){"virtualization.vm", m->vm};
    return n;
}

/* Case-insensitive strstr (ASCII). */
static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return true;
    return n == 0;
}

void price_match(const struct price_spec *spec, const struct machine_facts *facts,
                 struct price_match *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->currency, spec->currency[0] ? spec->currency : PRICE_DEFAULT_CURRENCY, 4);
    if (!spec->file) {
        out->priced = spec->per_hour > 0;
        out->per_hour = spec->per_hour;
        snprintf(out->source, sizeof out->source, "--price");
        return;
    }
    snprintf(out->source, sizeof out->source, "--price-file");
    out->file = xstrdup(spec->file);
    struct description d[16];
    size_t nd = descriptions(facts, d, sizeof d / sizeof d[0]);
    const struct price_entry *best = NULL;
    const struct description *at = NULL;
    for (size_t i = 0; i < spec->n_entries && !best; i++)
        for (size_t k = 0; k < nd && !best; k++)
            if (!strcmp(spec->entries[i].name, d[k].value)) {
                best = &spec->entries[i];
                at = &d[k];
                out->rule = "exact";
            }
    for (size_t i = 0; i < spec->n_entries && !out->rule; i++) {
        size_t len = strlen(spec->entries[i].name);
        if (best && len <= strlen(best->name))
            continue;
        for (size_t k = 0; k < nd; k++)
            if (contains_nocase(d[k].value, spec->entries[i].name)) {
                best = &spec->entries[i];
                at = &d[k];
                break;
            }
    }
    if (best) {
        if (!out->rule)
            out->rule = "substring";
        out->priced = true;
        out->per_hour = best->per_hour;
        out->entry = xstrdup(best->name);
        out->field = xstrdup(at->field);
        out->value = xstrdup(at->value);
    } else if (spec->default_per_hour > 0) {
        out->priced = true;
        out->per_hour = spec->default_per_hour;
        out->entry = xstrdup("default");
        out->rule = "default";
    }
}

void price_match_free(struct price_match *m)
{
    if (!m)
        return;
    free(m->file);
    free(m->entry);
    free(m->field);
    free(m->value);
    memset(m, 0, sizeof *m);
}
