/* outline_write.h: the outline being written and its primitives (outline_write.c), each one
 * call of the format's export_outline_ops: what the sections of the report (outline.c and the
 * outline_*.c it calls, outline_sections.h) write with. A leaf: it calls none of them. */
#ifndef MLBENCH_EXPORT_OUTLINE_WRITE_H
#define MLBENCH_EXPORT_OUTLINE_WRITE_H

#include "export/export.h"

struct outline {
    const struct export_outline_ops *ops;
    void *ctx;
    const struct export_request *req;
    int level;  /* heading level of a result's sections */
};

/* A heading, a paragraph (printf-style; the text is the format's to escape). */
void outline_heading(struct outline *o, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void outline_para(struct outline *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Renders t and frees it. */
void outline_table(struct outline *o, struct export_table *t);
/* A group of ops->group_begin/group_end; a FOLDED one without them is a heading. */
void outline_group_begin(struct outline *o, enum export_group g, const char *title);
void outline_group_end(struct outline *o, enum export_group g);

/* Hands the items of l (strvec_pushf appends one, written as given) to ops->list, then
 * frees them. */
void o_list(struct outline *o, struct strvec *l);

#endif
