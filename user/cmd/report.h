/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* pyuprof report, with the options cli.c parsed into env. */
#ifndef __PYUPROF_REPORT_H
#define __PYUPROF_REPORT_H

/* Replays env.input into the outputs env asks for; returns pyuprof's exit status. */
int report__run(void);

#endif /* __PYUPROF_REPORT_H */
