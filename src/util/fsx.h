/* fsx: files as the harness reads and writes them: a whole file into memory with a size limit,
 * directories with their parents, and atomic replacement (a temporary file in the same
 * directory, fsync, rename), so that a reader never sees a partial file. Thread-safe. */
#ifndef MLBENCH_FSX_H
#define MLBENCH_FSX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The whole file as a NUL-terminated string owned by the caller (*len, when not NULL, its
 * length; the text may hold NULs). NULL with errno set when it cannot be read, EFBIG when it is
 * larger than max_bytes. */
char *fsx_read_file(const char *path, size_t max_bytes, size_t *len);
/* The same, but a larger file gives its first max_bytes (for /proc and /sys files, whose size
 * is unknown until read). */
char *fsx_read_prefix(const char *path, size_t max_bytes, size_t *len);

/* Creates dir and its parents as needed (mode 0777 & ~umask). Returns 0, or -1 with errno. */
int fsx_mkdirs(const char *dir);

/* Whether no process has this pid any more (the writer of a stale file was killed). */
bool fsx_pid_gone(long pid);

/* Removes from dir what a process killed before it could clean up left behind: entries named
 * "...MARK PID.XXXXXX" (or "-XXXXXX") of a PID that is gone, ours and not links. Without inner
 * they are regular files (the temporaries of fsx_atomic_open: mark ".tmp."); with inner they
 * are directories whose name starts with mark, holding the file inner (the marker socket's:
 * mark "mlbench-"), removed with it. Returns how many were removed. */
size_t fsx_clean_stale(const char *dir, const char *mark, const char *inner);

/* A file being written in place of path. The temporary file beside it is named
 * "PATH.tmp.PID.XXXXXX", so that fsx_clean_stale can tell a dead writer's. */
struct fsx_atomic {
    FILE *f;       /* write here (buffered) */
    char *tmp;     /* the temporary file beside path */
    char *path;
    int fd;        /* the temporary file's */
    int error;     /* the errno of the first write that failed, 0 if none */
};

/* Opens a temporary file beside path (mode 0644). Returns its stream, or NULL with a message in
 * err ("cannot write PATH: reason"). The stream's writes keep their errno in a->error (stdio
 * keeps only a flag, and errno is overwritten by the time the caller looks): a must stay where
 * it is until commit or abort. */
FILE *fsx_atomic_open(struct fsx_atomic *a, const char *path, char *err, size_t errlen);
/* Flushes, syncs and renames the file over path. Returns 0, or -1 with a message in err (the
 * temporary file is then removed and path untouched). Frees a either way. */
int fsx_atomic_commit(struct fsx_atomic *a, char *err, size_t errlen);
/* Drops the temporary file; path is untouched. */
void fsx_atomic_abort(struct fsx_atomic *a);

#endif
