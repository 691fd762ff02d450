/* outline_sweep.c: the sweep part of the report outline (export_outline, outline.c, calls it
 * when the request carries a sweep): the title and answer (the winner, the find-max answer),
 * then what was swept, the table of the points, the charts, the points that did not run, the
 * constraints not met, every point's warnings, and in find-max mode the probes. */
#include "export/outline_sections.h"

#include <stdlib.h>

#include "export/sweep.h"

static void o_lines(struct outline *o, struct strvec *l, const char *intro)
{
    if (l->n) {
        outline_para(o, "%s", intro);
        o->ops->list(o->ctx, (const char *const *)l->v, l->n);
    }
    strvec_free(l);
}

void outline_sweep(struct outline *o)
{
    const struct doc_sweep *sw = o->req->sweep_doc;
    outline_heading(o, 1, "mlbench sweep: %s", str_or(sw->id, "(no id)"));
    struct strvec fm = STRVEC_INIT;
    export_sweep_find_max(sw, &fm);
    outline_group_begin(o, EXPORT_GROUP_ANSWER, NULL);
    char *winner = export_sweep_winner(sw), *about = export_sweep_about(sw);
    outline_para(o, "%c%s.", winner[0] == 'w' ? 'W' : 'N', winner + 1);
    if (fm.n)
        outline_para(o, "%s", fm.v[0]);
    outline_para(o, "%s", about);
    free(winner);
    free(about);
    outline_group_end(o, EXPORT_GROUP_ANSWER);

    outline_heading(o, 2, "Sweep");
    outline_para(o, "Sweep %s, created %s: every point is a full measured benchmark stored as a "
           "result; the figures are its medians.", str_or(sw->id, "?"), str_or(sw->created, "?"));
    const json_t *cmd = sw->command;
    if (json_array_size(cmd)) {
        struct strbuf b = STRBUF_INIT;
        for (size_t i = 0; i < json_array_size(cmd) && i < 256; i++) {
            const char *w = json_string_value(json_array_get(cmd, i));
            char *q = export_shell_quote(w ? w : "?");
            strbuf_printf(&b, "%s%s", i ? " " : "", q);
            free(q);
        }
        outline_para(o, "Command template ({NAME} is each parameter's value):");
        o->ops->code(o->ctx, b.s);
        strbuf_free(&b);
    }
    struct export_sweep_columns c;
    export_sweep_columns(sw, &c);
    struct export_table t;
    if (export_sweep_table(&t, sw, &c)) {
        outline_table(o, &t);
    } else {
        export_table_free(&t);
        outline_para(o, "The sweep has no point.");
    }
    char *obj = export_sweep_objective(sw);
    outline_para(o, "\u2605 the winner. %s", obj);
    free(obj);
    if (o->ops->figure)
        o->ops->figure(o->ctx, EXPORT_FIGURE_SWEEP, o->req, 0);
    struct strvec not_ok = STRVEC_INIT, cons = STRVEC_INIT, warn = STRVEC_INIT;
    export_sweep_notes(sw, &not_ok, &cons, &warn);
    o_lines(o, &not_ok, "Points that did not run ok:");
    o_lines(o, &cons, "Constraints not met:");
    if (!warn.n)
        outline_para(o, "No point has a warning about its measurement.");
    o_lines(o, &warn, "Warnings about the points' measurements:");
    if (sw->find_max.present) {
        outline_heading(o, 3, "The largest value that fits");
        o->ops->list(o->ctx, (const char *const *)fm.v, fm.n);
        if (export_sweep_probes(&t, sw)) {
            outline_para(o, "The probes, in the order they ran (doubling, then bisection):");
            outline_table(o, &t);
        } else {
            export_table_free(&t);
        }
        if (o->ops->figure)
            o->ops->figure(o->ctx, EXPORT_FIGURE_FIND_MAX, o->req, 0);
    }
    strvec_free(&fm);
    if (o->req->n == 0)
        outline_para(o, "No point has a stored result to report in detail.");
}
