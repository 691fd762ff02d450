/* instruments: the marker receiver, sampler and environments around a measured command (see
 * instruments.h). */
#include "measure/instruments.h"

#include <stdlib.h>
#include <string.h>

#include "mlbench/marker.h"
#include "mlbench/marker_ring.h"
#include "util/log.h"
#include "util/xalloc.h"

extern char **environ;

/* Our environment without MLBENCH_MARKER_SOCKET and MLBENCH_MARKER_RING (an mlbench we run
 * under offers them to us, not to our command), plus the variables extra[0..n) ("NAME=value",
 * NULL ones skipped, replacing ours of the same name). */
static char **environment_with(char *const *extra, size_t n_extra)
{
    static const char socket_prefix[] = MLBENCH_MARKER_SOCKET_ENV "=";
    static const char ring_prefix[] = MLBENCH_MARKER_RING_ENV "=";
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = xcalloc(n + n_extra + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = strncmp(environ[i], socket_prefix, sizeof socket_prefix - 1) == 0 ||
                        strncmp(environ[i], ring_prefix, sizeof ring_prefix - 1) == 0;
        for (size_t j = 0; j < n_extra && !replaced; j++)
            replaced = extra[j] && strncmp(environ[i], extra[j], strcspn(extra[j], "=") + 1) == 0;
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++)
        if (extra[j])
            env[k++] = extra[j];
    return env;
}

int instruments_open(struct instruments *s, const struct instruments_config *cfg, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    bool rings = false;
    if (cfg->markers && markers_transport_from_env(&rings, err, errlen) < 0)
        return -2;
    if (cfg->markers) {
        if (!(s->markers = markers_start(rings, err, errlen)))
            return -1;
        s->socket_var = xasprintf("%s=%s", MLBENCH_MARKER_SOCKET_ENV, markers_path(s->markers));
    }
    if (s->markers && cfg->rank_listen &&
        !(s->collector = rank_collector_start(cfg->rank_listen, s->markers, err, errlen))) {
        markers_stop(s->markers);
        free(s->socket_var);
        memset(s, 0, sizeof *s);
        return -2;
    }
    struct sampler_config scfg = {.interval_ns = cfg->interval_ns,
                                  .adaptive = cfg->adaptive, .all_gpus = cfg->all_gpus};
    s->sampler = sampler_open(&scfg);
    char *vars[] = {s->socket_var, (char *)cfg->extra_var,
                    s->collector ? (char *)rank_collector_env(s->collector) : NULL,
                    s->markers && markers_rings_offered(s->markers)
                        ? MLBENCH_MARKER_RING_ENV "=1" : NULL};
    s->env = environment_with(vars, 4);
    s->helper_env = environment_with(NULL, 0);
    return 0;
}

void instruments_spawned(void *arg, pid_t pid)
{
    struct instruments *s = arg;
    sampler_set_leader(s->sampler, pid);
}

void instruments_before_reap(void *arg)
{
    struct instruments *s = arg;
    if (s->markers)
        markers_sync(s->markers);
}

void instruments_stop_markers(struct instruments *s)
{
    uint64_t refused = s->collector ? rank_collector_refused(s->collector) : 0;
    if (refused)
        log_warn("--ranks-listen: %llu connection(s) to the rank collector were refused (a wrong "
                 "token, or not mlbench rank-exec): is something else connecting to that "
                 "address?", (unsigned long long)refused);
    rank_collector_stop(s->collector); /* first: it stores into the receiver */
    s->collector = NULL;
    markers_stop(s->markers);
    s->markers = NULL;
}

void instruments_close(struct instruments *s)
{
    instruments_stop_markers(s);
    sampler_close(s->sampler);
    free(s->env);
    free(s->helper_env);
    free(s->socket_var);
    memset(s, 0, sizeof *s);
}
