/* session: the marker receiver, sampler and environments around a measured command (see
 * session.h). */
#include "measure/session.h"

#include <stdlib.h>
#include <string.h>

#include "mlbench/marker.h"
#include "util/xalloc.h"

extern char **environ;

/* Our environment without MLBENCH_MARKER_SOCKET, plus var ("NAME=value", replacing ours of the
 * same name) and var2 when not NULL. */
static char **environment_with(char *var, char *var2)
{
    static const char socket_prefix[] = MLBENCH_MARKER_SOCKET_ENV "=";
    size_t n = 0;
    while (environ[n])
        n++;
    char *extra[] = {var, var2};
    char **env = xcalloc(n + 3, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = strncmp(environ[i], socket_prefix, sizeof socket_prefix - 1) == 0;
        for (size_t j = 0; j < 2 && !replaced; j++)
            replaced = extra[j] && strncmp(environ[i], extra[j], strcspn(extra[j], "=") + 1) == 0;
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < 2; j++)
        if (extra[j])
            env[k++] = extra[j];
    return env;
}

int session_open(struct session *s, const struct session_config *cfg, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (cfg->markers) {
        if (!(s->markers = markers_start(err, errlen)))
            return -1;
        s->socket_var = xasprintf("%s=%s", MLBENCH_MARKER_SOCKET_ENV, markers_path(s->markers));
    }
    struct sampler_config scfg = {.interval_ns = cfg->interval_ns,
                                  .adaptive = cfg->adaptive, .all_gpus = cfg->all_gpus};
    s->sampler = sampler_open(&scfg);
    s->env = environment_with(s->socket_var, (char *)cfg->extra_var);
    s->helper_env = environment_with(NULL, NULL);
    return 0;
}

void session_spawned(void *arg, pid_t pid)
{
    struct session *s = arg;
    sampler_set_leader(s->sampler, pid);
}

void session_before_reap(void *arg)
{
    struct session *s = arg;
    if (s->markers)
        markers_sync(s->markers);
}

void session_stop_markers(struct session *s)
{
    markers_stop(s->markers);
    s->markers = NULL;
}

void session_close(struct session *s)
{
    session_stop_markers(s);
    sampler_close(s->sampler);
    free(s->env);
    free(s->helper_env);
    free(s->socket_var);
    memset(s, 0, sizeof *s);
}
