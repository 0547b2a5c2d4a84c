/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Descriptors closed by a process of their own, so that pyuprof need not wait. Removing a
 * uprobe waits for grace periods of the kernel's (20-80 ms a link on the test VM) when its
 * last descriptor is closed; a process that exits holding it waits just the same (the kernel
 * closes its files before its parent can reap it). A child that holds copies of the links of
 * a process that has ended lets pyuprof close its own at once: the kernel removes them when the
 * child exits, which it does at once, in the background, as pyuprof's own exit would have.
 */
#ifndef __PYUPROF_CLOSE_BEHIND_H
#define __PYUPROF_CLOSE_BEHIND_H

/*
 * Forks a child that keeps fds[0..n) (and nothing else: no pipe of the caller's stays open in
 * it) until the caller closes the descriptor returned, then exits. The caller's copies are then
 * no longer the last: it closes them at once, and then the one returned. Returns that
 * descriptor, or -errno (nothing forked: the caller closes its own, and waits).
 */
int close_behind__fork(const int *fds, int n);

#endif /* __PYUPROF_CLOSE_BEHIND_H */
