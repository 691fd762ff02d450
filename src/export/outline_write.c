/* outline_write.c: the primitives the report's outline is written with (outline_write.h),
 * each one call of the format's export_outline_ops. */
#include "export/outline_write.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/xalloc.h"

void outline_heading(struct outline *o, int level, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    o->ops->heading(o->ctx, level, text);
}

void outline_para(struct outline *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvasprintf(fmt, ap);
    va_end(ap);
    o->ops->paragraph(o->ctx, text);
    free(text);
}

void o_list(struct outline *o, struct strvec *l)
{
    if (l->n)
        o->ops->list(o->ctx, (const char *const *)l->v, l->n);
    strvec_free(l);
}

void outline_table(struct outline *o, struct export_table *t)
{
    o->ops->table(o->ctx, t);
    export_table_free(t);
}

void outline_group_begin(struct outline *o, enum export_group g, const char *title)
{
    if (o->ops->group_begin)
        o->ops->group_begin(o->ctx, g, o->level, title);
    else if (g == EXPORT_GROUP_FOLDED)
        outline_heading(o, o->level, "%s", title);
}

void outline_group_end(struct outline *o, enum export_group g)
{
    if (o->ops->group_end)
        o->ops->group_end(o->ctx, g);
}
