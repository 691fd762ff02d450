/* env_table.c: a result's environment (the "environment" object: CPU, GPUs, memory, OS, ...)
 * as the two-column table of the reports: CPU, GPU, memory and OS first, nested objects as
 * dotted names, an array of objects one row per element (see export_env_table in export.h). */
#include "export/export.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* CPU, GPU, memory and OS first, then the rest in document order. */
static int env_rank(const char *key)
{
    static const char *const first[][4] = {
        {"cpu", NULL}, {"gpu", "nvidia", "cuda", NULL}, {"mem", NULL},
        {"os", "kernel", "distribution", "machine"},
    };
    for (size_t r = 0; r < sizeof first / sizeof first[0]; r++)
        for (size_t k = 0; k < 4 && first[r][k]; k++)
            if (!strncmp(key, first[r][k], strlen(first[r][k])))
                return (int)r;
    return 4;
}

/* A scalar as the environment table shows it: sizes (keys ending in _bytes) in binary units. */
static char *env_scalar(const char *key, const json_t *v, char *buf, size_t len)
{
    if (json_is_number(v) && export_ends_with(key, "_bytes"))
        return export_fmt_bytes(json_number_value(v), buf, len);
    return export_fmt_value(v, buf, len);
}

/* The member that names an element of an array of objects (a GPU's index, a variable's name),
 * or NULL. */
static const char *env_label_key(const json_t *o)
{
    static const char *const keys[] = {"index", "name", "key", "id"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(o, keys[i]);
        if (json_is_string(v) || json_is_integer(v))
            return keys[i];
    }
    return NULL;
}

/* An object on one line, "size_bytes 48.0 KiB, shared_by_cpus 1", without member skip; an
 * object that is only {label, value} gives its value alone. New string. */
static char *env_inline(const json_t *o, const char *skip)
{
    char buf[1024];
    struct strbuf b = STRBUF_INIT;
    const json_t *value = json_object_get(o, "value");
    if (skip && value && json_object_size(o) == 2 && !json_is_object(value) &&
        !json_is_array(value)) {
        strbuf_puts(&b, env_scalar("value", value, buf, sizeof buf));
        return strbuf_take(&b);
    }
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)o, k, x) {
        if (skip && !strcmp(k, skip))
            continue;
        if (b.len)
            strbuf_puts(&b, ", ");
        strbuf_puts(&b, k);
        strbuf_puts(&b, " ");
        strbuf_puts(&b, env_scalar(k, x, buf, sizeof buf));
    }
    return strbuf_take(&b);
}

/* Rows for value under name: objects become dotted names, an array of objects one row per
 * element named by its label member, an array of scalars one row. */
static void env_rows(struct export_table *t, const char *name, const json_t *v)
{
    char buf[1024];
    if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            char *sub = xasprintf("%s.%s", name, k);
            env_rows(t, sub, x);
            free(sub);
        }
        return;
    }
    size_t r = export_table_row(t, 0);
    if (!json_is_array(v)) {
        export_table_set(t, r, 0, "%s", name);
        export_table_set(t, r, 1, "%s", env_scalar(name, v, buf, sizeof buf));
        return;
    }
    bool scalars = true;
    for (size_t i = 0; i < json_array_size(v); i++)
        scalars = scalars && !json_is_object(json_array_get(v, i)) &&
                  !json_is_array(json_array_get(v, i));
    if (scalars) {
        struct strbuf b = STRBUF_INIT;
        strbuf_puts(&b, json_array_size(v) ? "" : "(none)");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                strbuf_puts(&b, ", ");
            strbuf_puts(&b, export_fmt_value(json_array_get(v, i), buf, sizeof buf));
        }
        export_table_set(t, r, 0, "%s", name);
        export_table_set(t, r, 1, "%s", b.s);
        strbuf_free(&b);
        return;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (i)
            r = export_table_row(t, 0);
        const char *label = json_is_object(e) ? env_label_key(e) : NULL;
        if (label)
            export_table_set(t, r, 0, "%s.%s", name,
                             export_fmt_value(json_object_get(e, label), buf, sizeof buf));
        else
            export_table_set(t, r, 0, "%s.%zu", name, i);
        char *line = json_is_object(e) ? env_inline(e, label)
                                       : xstrdup(export_fmt_value(e, buf, sizeof buf));
        export_table_set(t, r, 1, "%s", line);
        free(line);
    }
}

void export_env_table(struct export_table *t, const json_t *env)
{
    export_table_init(t, 2, "property", "value");
    for (int rank = 0; rank <= 4; rank++) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)env, k, v)
            if (env_rank(k) == rank)
                env_rows(t, k, v);
    }
}
