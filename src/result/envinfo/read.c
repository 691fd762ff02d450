/* envinfo/read.c: the file reading and value parsing every part of the environment capture
 * uses: whole files and first lines relative to a root directory (a fake tree in tests), JSON
 * fields set only when known, variables looked up in an envp, and the size and CPU-list
 * parsers of sysfs and /proc. */
#include "result/envinfo/internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsx.h"
#include "util/units.h"
#include "util/xalloc.h"

#define FILE_MAX_BYTES (16u << 20) /* /proc/cpuinfo of a 1000-CPU machine is about 1.5 MiB */

/* The whole file ROOT/path as a NUL-terminated string owned by the caller, or NULL. */
char *envinfo_read_file(const char *root, const char *path)
{
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
        return NULL;
    return fsx_read_prefix(full, FILE_MAX_BYTES, NULL);
}

/* The first line of ROOT/path, without surrounding white space, into buf. False when the file
 * could not be read or that line is empty. */
bool envinfo_read_line(const char *root, const char *path, char *buf, size_t len)
{
    char *text = envinfo_read_file(root, path);
    if (!text)
        return false;
    const char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, "\n");
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    snprintf(buf, len, "%.*s", (int)n, s);
    free(text);
    return n > 0;
}

/* A whole number read from ROOT/path, or -1. */
int64_t envinfo_read_int(const char *root, const char *path)
{
    char buf[64], *end;
    if (!envinfo_read_line(root, path, buf, sizeof buf))
        return -1;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    return errno || end == buf || *end ? -1 : (int64_t)v;
}

/* Sets key to s when s is a non-empty string; bytes that are not UTF-8 become '?'. */
void envinfo_set_text(json_t *o, const char *key, const char *s)
{
    if (!s || !*s)
        return;
    char *clean = units_utf8_sanitize(s, strlen(s));
    json_object_set_new(o, key, json_string(clean));
    free(clean);
}

void envinfo_copy_text(char *buf, size_t len, const char *s)
{
    char *clean = units_utf8_sanitize(s ? s : "", s ? strlen(s) : 0);
    snprintf(buf, len, "%s", clean);
    free(clean);
}

void envinfo_set_int(json_t *o, const char *key, int64_t v)
{
    if (v >= 0)
        json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* The value of NAME in envp, or NULL. */
const char *envinfo_getenv(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

int64_t envinfo_parse_size(const char *s)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    while (*end == ' ')
        end++;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'I' && shift)
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end || v > (unsigned long long)INT64_MAX >> shift)
        return -1;
    return (int64_t)(v << shift);
}

int envinfo_count_cpu_list(const char *list)
{
    int n = 0;
    const char *s = list;
    if (!s)
        return -1;
    while (*s && *s != '\n') {
        char *end;
        if (!isdigit((unsigned char)*s))
            return -1;
        long a = strtol(s, &end, 10), b = a;
        if (*end == '-') {
            if (!isdigit((unsigned char)end[1]))
                return -1;
            b = strtol(end + 1, &end, 10);
        }
        if (b < a || b - a >= INT_MAX - n)
            return -1;
        n += (int)(b - a + 1);
        s = end;
        if (*s == ',')
            s++;
        else if (*s && *s != '\n')
            return -1;
    }
    return n > 0 ? n : -1;
}
