/* http_server: the HTTP endpoint of a live exporter, on libmicrohttpd. GET (or HEAD) /metrics
 * answers the Prometheus exposition of a struct live_metrics, /healthz answers "ok", anything
 * else 404 (405 for methods other than GET and HEAD). It listens on one address, 127.0.0.1
 * unless told otherwise, and serves from its own threads until stopped. */
#ifndef MLBENCH_HTTP_SERVER_H
#define MLBENCH_HTTP_SERVER_H

#include <stddef.h>
#include <sys/socket.h>

#include "live/live.h"

/* Where `mlbench monitor` listens when not told: 127.0.0.1 and the port commonly used by
 * Prometheus exporters of applications. */
#define HTTP_DEFAULT_LISTEN "127.0.0.1:9464"

/* Parses a listen address: "HOST:PORT" (HOST an IPv4 address or a name, e.g. "0.0.0.0:9464",
 * "localhost:9464"), "[IPV6]:PORT" ("[::1]:9464", "[::]:9464"), ":PORT" or "PORT" (127.0.0.1).
 * PORT is 0..65535 (0: the system picks one). Names are resolved (first address).
 * Returns 0 with the address in *addr / *addrlen, or -1 with a message naming the value in err.
 * Thread-safe. */
int http_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *addrlen,
                      char *err, size_t errlen);

/* Formats an address as "127.0.0.1:9464" or "[::1]:9464" into buf. Returns buf. */
char *http_format_address(const struct sockaddr *addr, socklen_t addrlen, char *buf, size_t len);

struct http_server;

/* Binds listen (NULL or "": HTTP_DEFAULT_LISTEN) and starts serving live, which must outlive
 * the server. Returns NULL with a message in err when the address is bad or cannot be bound
 * ("port in use"). The server's threads start with the signal mask of the caller: call
 * runner_init() first so that they leave SIGINT/SIGTERM/SIGHUP to the main thread. */
struct http_server *http_server_start(const char *listen, struct live_metrics *live, char *err,
                                      size_t errlen);
/* The address really bound ("127.0.0.1:40123" when port 0 was asked for). Owned by s. */
const char *http_server_address(const struct http_server *s);
/* Stops serving (waits for requests in progress), closes the socket and frees s. NULL is
 * allowed. */
void http_server_stop(struct http_server *s);

#endif
