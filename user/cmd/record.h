/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* pyuprof record and pyuprof top, with the options cli.c parsed into env. */
#ifndef __PYUPROF_RECORD_H
#define __PYUPROF_RECORD_H

/* Records as env says; returns pyuprof's exit status (a launched program's own, if it ran). */
int record__run(void);

#endif /* __PYUPROF_RECORD_H */
