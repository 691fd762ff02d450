/* nvtx_name: marker names from what NVTX calls give (part of libmlbench_nvtx, see
 * nvtx_inject.c): UTF-8 and wide messages made into marker names (white space and control
 * characters as '_', invalid input as '?', cut to fit one datagram), registered strings,
 * domains (a "<domain>:" prefix) and named categories. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "nvtx_private.h"

/* ---- Names ---- */

#define DOMAIN_PREFIX_CAP 256 /* bytes of a domain name kept in the prefix */
#define INVALID_CHAR '?'      /* stands for input that is not valid UTF-8/UTF-16/UTF-32 */
#define FALLBACK_NAME "nvtx"  /* an event without a message nor a named category */

struct nvtx_domain {
    struct nvtx_domain *next;
    size_t prefix_len;
    char prefix[]; /* the domain's name as a marker name, then ':' */
};

struct nvtx_string { /* a registered string: the handle NVTX gives back to the program */
    struct nvtx_string *next;
    size_t len;
    char name[]; /* as a marker name */
};

struct category {
    struct category *next;
    const struct nvtx_domain *domain; /* NULL: the global domain */
    uint32_t id;
    size_t len;
    char name[]; /* as a marker name */
};

/* A name being built in a buffer of at least `cap` + 1 bytes. */
struct name_buf {
    char *s;
    size_t len, cap;
};

static int is_space_or_control(uint32_t cp)
{
    if (cp <= 0x20 || (cp >= 0x7f && cp <= 0xa0))
        return 1; /* C0 and C1 controls, space, DEL, no-break space */
    return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Appends code point cp as UTF-8, white space and control characters as '_'. Returns 0, or
 * -1 when it does not fit: the name is cut before it, at a character boundary. */
static int name_put(struct name_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (is_space_or_control(cp)) {
        u[0] = '_';
        n = 1;
    } else if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    if (b->len + n > b->cap)
        return -1;
    memcpy(b->s + b->len, u, n);
    b->len += n;
    return 0;
}

/* Decodes the UTF-8 sequence at s (NUL-terminated) into *cp, INVALID_CHAR for a malformed one
 * (overlong, surrogate, beyond U+10FFFF, cut short); returns the bytes consumed (>= 1). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1fu, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0fu, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07u, min = 0x10000;
    } else {
        *cp = INVALID_CHAR;
        return 1;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) { /* a NUL stops here too */
            *cp = INVALID_CHAR;
            return i;
        }
        v = (v << 6) | (s[i] & 0x3fu);
    }
    *cp = (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) ? INVALID_CHAR : v;
    return n;
}

/* Appends a UTF-8 (NVTX says "ASCII") string as a marker name, cut to fit. */
static void name_add_utf8(struct name_buf *b, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s != '\0') {
        if (*s > 0x20 && *s < 0x7f) { /* the common case: printable ASCII */
            if (b->len == b->cap)
                return;
            b->s[b->len++] = (char)*s++;
            continue;
        }
        uint32_t cp;
        s += utf8_decode(s, &cp);
        if (name_put(b, cp) != 0)
            return;
    }
}

/* Appends a wide string (UTF-32 where wchar_t has 32 bits, as on Linux; UTF-16 otherwise) as
 * a marker name, cut to fit. */
static void name_add_wide(struct name_buf *b, const wchar_t *text)
{
    for (const wchar_t *w = text; *w != 0; w++) {
        uint32_t cp = (uint32_t)*w;
        if (sizeof(wchar_t) == 2 && cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t lo = (uint32_t)w[1];
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                w++;
            }
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            cp = INVALID_CHAR;
        if (name_put(b, cp) != 0)
            return;
    }
}

/* Appends n bytes of a name already clean (a prefix, a registered string), cut to fit at a
 * UTF-8 character boundary. */
static void name_add_clean(struct name_buf *b, const char *s, size_t n)
{
    if (n > b->cap - b->len) {
        n = b->cap - b->len;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
}

/* ---- Lists (under g_lock) ---- */

static struct nvtx_domain *g_domains;
static struct nvtx_string *g_strings;
static struct category *g_categories;

/* The name of category `id` of domain d as a marker name, copied into b; 0, or -1 when the
 * category has no name. The newest name given wins. */
static int category_name(struct name_buf *b, const struct nvtx_domain *d, uint32_t id)
{
    int found = -1;
    pthread_mutex_lock(&g_lock);
    for (const struct category *c = g_categories; c != NULL; c = c->next) {
        if (c->domain == d && c->id == id) {
            name_add_clean(b, c->name, c->len);
            found = 0;
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return found;
}

/* Appends the text of message m (nothing for none or a NULL pointer). */
static void name_add_message(struct name_buf *b, const struct message *m)
{
    switch (m->type) {
    case ABI_MESSAGE_ASCII:
        if (m->v.ascii != NULL)
            name_add_utf8(b, m->v.ascii);
        break;
    case ABI_MESSAGE_UNICODE:
        if (m->v.unicode != NULL)
            name_add_wide(b, m->v.unicode);
        break;
    case ABI_MESSAGE_REGISTERED:
        if (m->v.registered != NULL)
            name_add_clean(b, m->v.registered->name, m->v.registered->len);
        break;
    default:
        break;
    }
}

/* Writes the text of message m as a marker name into out (cap + 1 bytes), NUL-terminated;
 * returns its length, 0 when the message is empty. For registrations. */
static size_t message_name(char *out, size_t cap, const struct message *m)
{
    struct name_buf b = {out, 0, cap};
    name_add_message(&b, m);
    out[b.len] = '\0';
    return b.len;
}

/* Writes the stage name of an event in domain d (NULL: global) into out (NAME_CAP + 1 bytes):
 * "<domain>:" for a named domain, then the message; without a message, the name of its
 * category, else FALLBACK_NAME. Returns the length, at least 1; out is NUL-terminated. */
size_t nvtx_event_name(char *out, const struct nvtx_domain *d, const struct message *m)
{
    struct name_buf b = {out, 0, NAME_CAP};
    if (d != NULL)
        name_add_clean(&b, d->prefix, d->prefix_len);
    size_t start = b.len;
    name_add_message(&b, m);
    if (b.len == start && (m->category == 0 || category_name(&b, d, m->category) != 0))
        name_add_clean(&b, FALLBACK_NAME, sizeof FALLBACK_NAME - 1);
    out[b.len] = '\0';
    return b.len;
}

/* The message of an Ex call's attributes; a NULL or too short structure gives none. */
struct message nvtx_attr_message(const struct abi_event_attributes *a)
{
    struct message m = {ABI_MESSAGE_NONE, {NULL}, 0};
    if (a == NULL)
        return m;
    if (a->size >= offsetof(struct abi_event_attributes, category) + sizeof a->category)
        m.category = a->category;
    if (a->size >= offsetof(struct abi_event_attributes, message) + sizeof a->message) {
        m.type = (enum abi_message_type)a->message_type;
        m.v = a->message;
    }
    return m;
}

/* ---- Domains, registered strings, categories ---- */

/* The domain named by message m, created on first use: one handle per name, kept until the
 * process exits (nvtxDomainDestroy is a no-op). A domain without a name is the global domain,
 * the NULL handle. */
struct nvtx_domain *nvtx_domain_create(const struct message *m)
{
    char prefix[DOMAIN_PREFIX_CAP + 1];
    size_t len = message_name(prefix, DOMAIN_PREFIX_CAP - 1, m); /* leaves room for the ':' */
    if (len == 0)
        return NULL;
    prefix[len++] = ':';
    pthread_mutex_lock(&g_lock);
    struct nvtx_domain *d = g_domains;
    while (d != NULL && (d->prefix_len != len || memcmp(d->prefix, prefix, len) != 0))
        d = d->next;
    if (d == NULL) {
        d = nvtx_xrealloc(NULL, sizeof *d + len + 1);
        d->prefix_len = len;
        memcpy(d->prefix, prefix, len);
        d->prefix[len] = '\0';
        d->next = g_domains;
        g_domains = d;
    }
    pthread_mutex_unlock(&g_lock);
    return d;
}

/* A registered string: kept until the process exits, as NVTX specifies. Its domain is applied
 * where it is used. */
const struct nvtx_string *nvtx_string_register(const struct message *m)
{
    char name[NAME_CAP + 1];
    size_t len = message_name(name, NAME_CAP, m);
    struct nvtx_string *s = nvtx_xrealloc(NULL, sizeof *s + len + 1);
    s->len = len;
    memcpy(s->name, name, len + 1);
    pthread_mutex_lock(&g_lock);
    s->next = g_strings;
    g_strings = s;
    pthread_mutex_unlock(&g_lock);
    return s;
}

/* Names category `id` of domain d (NULL: global); an empty name is ignored. */
void nvtx_category_set(const struct nvtx_domain *d, uint32_t id, const struct message *m)
{
    char name[NAME_CAP + 1];
    size_t len = message_name(name, NAME_CAP, m);
    if (len == 0)
        return;
    struct category *c = nvtx_xrealloc(NULL, sizeof *c + len + 1);
    c->domain = d;
    c->id = id;
    c->len = len;
    memcpy(c->name, name, len + 1);
    pthread_mutex_lock(&g_lock);
    c->next = g_categories; /* first in the list: the newest name wins */
    g_categories = c;
    pthread_mutex_unlock(&g_lock);
}
