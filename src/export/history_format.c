/* history_format.c: the table of the history dashboard formats (history.h), one file each
 * (history_md.c, history_csv.c, history_html.c), and the look-ups of `mlbench history
 * --format` and -o FILE. */
#include "export/history.h"

#include <string.h>

static const struct history_format *const formats[] = {&history_md, &history_csv, &history_html};
#define N_FORMATS (sizeof formats / sizeof formats[0])

const struct history_format *history_format_find(const char *name)
{
    for (size_t i = 0; name && i < N_FORMATS; i++)
        if (!strcmp(formats[i]->name, name))
            return formats[i];
    return NULL;
}

const struct history_format *history_format_for_path(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || dot == path || strchr(dot, '/'))
        return NULL;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!strcmp(dot + 1, formats[i]->extension))
            return formats[i];
    return NULL;
}
