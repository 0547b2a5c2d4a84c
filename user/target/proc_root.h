/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A process's files when it runs in another root (a chroot, a container's mount namespace):
 * /proc/PID/maps and /proc/PID/exe name them as seen from pyuprof's own root, which may be no
 * path at all there (a pivot_root: /usr/bin/python3 names pyuprof's own file, not the
 * target's). A mapped file is opened through /proc/PID/map_files, whatever the paths are; the
 * executable is found inside the process's root by its identity, for the calibration to run.
 */
#ifndef __PYUPROF_PROC_ROOT_H
#define __PYUPROF_PROC_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether pid's root directory is pyuprof's own (the same directory, not a path). */
bool proc_root__is_ours(pid_t pid);

/*
 * How to open the file mapped at [start, end) in pid, into buf: /proc/PID/map_files/START-END
 * (the mapped file itself; needs CAP_SYS_ADMIN, or CAP_CHECKPOINT_RESTORE), or, where that
 * cannot be opened, /proc/PID/root/SHOWN (SHOWN: the path maps shows). Returns 0, or -errno
 * when neither opens.
 */
int proc_root__mapped_file(pid_t pid, uint64_t start, uint64_t end, const char *shown, char *buf,
			   size_t len);

/*
 * A path that maps showed, put for a message: as it is where it names the same file in
 * pyuprof's root (file: how the file is opened, from proc_root__mapped_file), else followed by
 * "in pid N's root".
 */
void proc_root__describe(pid_t pid, const char *shown, const char *file, char *buf, size_t len);

/*
 * pid's executable inside pid's root: the path that names it there (into buf), checked to be the
 * same file. Returns 0, or -ENOENT with why set when no path is found.
 */
int proc_root__exe(pid_t pid, char *buf, size_t len, char *why, size_t why_len);

#endif /* __PYUPROF_PROC_ROOT_H */
