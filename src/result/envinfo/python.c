/* envinfo/python.c: the `python` object of the environment: the version and executable of the
 * Python interpreter a workload would use, and the versions of PyTorch and NumPy as that
 * interpreter would import them. mlbench imports nothing: it runs the interpreter once for
 * sys.version and sys.path (python3 -c, no packages imported, killed after 3 s), then reads
 * the packages' metadata files (<pkg>-<version>.dist-info/METADATA or .egg-info/PKG-INFO beside
 * the package, else <pkg>/version.py) in the first sys.path folder that holds the package. */
#include "result/envinfo/internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

extern char **environ;

#define PYTHON_TIMEOUT_NS 3000000000LL
#define PROBE_OUT_MAX 16384

/* Prints the version, the executable and sys.path, one a line. Imports only sys. */
static const char probe[] = "import sys\n"
                            "print(sys.version.split()[0])\n"
                            "print(sys.executable)\n"
                            "for p in sys.path:\n"
                            "    print(p)\n";

static const char *const packages[] = {"torch", "numpy"};

/* The value after "key" at the start of a line of text (trimmed) into out. */
static bool line_value(const char *text, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, klen) != 0 || !p[klen] || !strchr(" \t=:", p[klen]))
            continue;
        p += klen;
        p += strspn(p, " \t=:");
        char quote = *p == '\'' || *p == '"' ? *p++ : 0;
        size_t n = quote ? strcspn(p, quote == '\'' ? "'\n" : "\"\n") : strcspn(p, " \t\r\n");
        if (n == 0 || n >= len)
            return false;
        memcpy(out, p, n);
        out[n] = '\0';
        return true;
    }
    return false;
}

static bool file_value(const char *path, const char *key, char *out, size_t len)
{
    char *text = envinfo_read_file("", path);
    bool ok = text && line_value(text, key, out, len);
    free(text);
    return ok;
}

/* The version of pkg installed in folder dir (which holds dir/pkg/__init__.py), from its
 * distribution metadata, else its version.py. */
static bool version_in(const char *dir, const char *pkg, char *out, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/__init__.py", dir, pkg);
    if (access(path, R_OK) != 0)
        return false;
    DIR *d = opendir(dir);
    bool found = false;
    size_t plen = strlen(pkg);
    for (struct dirent *de; d && !found && (de = readdir(d));) {
        const char *name = de->d_name, *dot = strrchr(name, '.');
        if (strncmp(name, pkg, plen) != 0 || name[plen] != '-' || !dot)
            continue;
        if (!strcmp(dot, ".dist-info")) {
            snprintf(path, sizeof path, "%s/%s/METADATA", dir, name);
        } else if (!strcmp(dot, ".egg-info")) {
            snprintf(path, sizeof path, "%s/%s/PKG-INFO", dir, name);
            if (access(path, R_OK) != 0) /* an egg-info may be the file itself */
                snprintf(path, sizeof path, "%s/%s", dir, name);
        } else {
            continue;
        }
        found = file_value(path, "Version:", out, len);
    }
    if (d)
        closedir(d);
    if (!found) {
        snprintf(path, sizeof path, "%s/%s/version.py", dir, pkg);
        found = file_value(path, "__version__", out, len) || file_value(path, "version", out, len);
    }
    return found;
}

json_t *envinfo_python(const char *root, const char *python, char *const *envp)
{
    char interpreter[4096];
    if (python && *python)
        snprintf(interpreter, sizeof interpreter, "%s", python);
    else if (root && *root)
        snprintf(interpreter, sizeof interpreter, "%s/usr/bin/python3", root);
    else
        snprintf(interpreter, sizeof interpreter, "python3");
    char *argv[] = {interpreter, (char *)"-c", (char *)probe, NULL};
    char *out = malloc(PROBE_OUT_MAX);
    size_t lines = 0;
    if (!out || envinfo_run(argv, envp ? envp : environ, out, PROBE_OUT_MAX, &lines,
                            mono_ns() + PYTHON_TIMEOUT_NS) != 0 || lines < 2) {
        free(out);
        return NULL;
    }
    json_t *o = json_object();
    char *save = NULL, *line = strtok_r(out, "\n", &save);
    envinfo_set_text(o, "version", line);
    envinfo_set_text(o, "executable", strtok_r(NULL, "\n", &save));
    json_t *found = json_object();
    char version[128];
    for (char *dir; (dir = strtok_r(NULL, "\n", &save));)
        for (size_t i = 0; i < sizeof packages / sizeof *packages; i++)
            if (dir[0] == '/' && !json_object_get(found, packages[i]) &&
                version_in(dir, packages[i], version, sizeof version))
                envinfo_set_text(found, packages[i], version);
    json_object_set_new(o, "packages", found);
    free(out);
    return o;
}
