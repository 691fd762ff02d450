/* The shared-memory transport of the marker protocol (docs/markers.md, "Ring transport"): the
 * binary layout a client writes and mlbench reads. The C library and the Python client use it
 * by themselves; this header is for clients in other languages and for mlbench's reader.
 *
 * When mlbench offers rings (MLBENCH_MARKER_RING is set, beside MLBENCH_MARKER_SOCKET), each
 * writer thread, on its first event:
 *   1. creates a memfd (memfd_create, MFD_ALLOW_SEALING) of MLB_RING_HEADER_BYTES +
 *      capacity * MLB_RING_RECORD_BYTES bytes, capacity a power of two, seals it against
 *      shrinking (F_SEAL_SHRINK: mlbench maps it and must never fault on a cut file), maps it
 *      shared and fills the header (magic, version, record size, capacity, pid, tid);
 *   2. hands the descriptor to mlbench on the marker socket: one datagram
 *      "M <t_ns> <pid> <tid> mlbench.ring <capacity>" carrying the descriptor (SCM_RIGHTS).
 * Names are interned once per process: before the first record that uses name id N (N >= 1,
 * ids of one process are shared by its threads), the process sends the datagram
 * "M <t_ns> <pid> <tid> mlbench.name <N> <name>". Metadata (M events) always travel as
 * datagrams. A record is then written with no system call:
 *   begun = head + 1; fill records[head % capacity]; head = head + 1 (a release store).
 * When head - tail == capacity the ring is full: the writer adds one to `dropped` and goes on
 * (it never waits for mlbench). mlbench reads records [tail, head) and then stores tail
 * (release). A writer that dies between `begun` and `head` leaves begun == head + 1: that
 * record is torn, and counted as malformed. All counters are little-endian 64-bit integers,
 * naturally aligned, only ever increasing. */
#ifndef MLBENCH_MARKER_RING_H
#define MLBENCH_MARKER_RING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Set by mlbench when it reads rings ("1": this version of the layout). */
#define MLBENCH_MARKER_RING_ENV "MLBENCH_MARKER_RING"
/* Bytes of records per ring (the user's choice; a power of two between the bounds below,
 * rounded down; mlbench refuses a bad value before it starts the workload). */
#define MLBENCH_MARKER_RING_BYTES_ENV "MLBENCH_MARKER_RING_BYTES"
#define MLB_RING_DEFAULT_BYTES (4u << 20)
#define MLB_RING_MIN_BYTES (1u << 12)
#define MLB_RING_MAX_BYTES (1u << 30)

#define MLB_RING_MAGIC "MLBRING1" /* 8 bytes, no NUL */
#define MLB_RING_VERSION 1
#define MLB_RING_HEADER_BYTES 256
#define MLB_RING_RECORD_BYTES 32
/* Name ids of one process are 1..MLB_RING_MAX_NAMES. */
#define MLB_RING_MAX_NAMES 65536

struct mlb_ring_header {
    char magic[8];          /* MLB_RING_MAGIC */
    uint32_t version;       /* MLB_RING_VERSION */
    uint32_t record_bytes;  /* MLB_RING_RECORD_BYTES */
    uint64_t capacity;      /* records; a power of two */
    int32_t pid, tid;       /* the writer thread */
    uint8_t reserved0[32];
    /* written by the writer only (offset 64) */
    uint64_t head;          /* records published */
    uint64_t begun;         /* records begun: head, or head + 1 while one is being written */
    uint64_t dropped;       /* records lost because the ring was full */
    uint8_t reserved1[40];
    /* written by mlbench only (offset 128) */
    uint64_t tail;          /* records read */
    uint8_t reserved2[120];
};

/* One event. kind is 'B', 'E', 'C' or 'I' (docs/markers.md); value is a C event's sample. */
struct mlb_ring_record {
    int64_t t_ns;           /* CLOCK_MONOTONIC */
    double value;           /* C: the counter's sample; else 0 */
    uint32_t name;          /* the process's name id */
    uint8_t kind;
    uint8_t reserved[11];
};

#ifdef __cplusplus
}
#endif

#endif
