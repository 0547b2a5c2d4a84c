// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One BPF object loaded at a time (base/bpf_serial.h). */
#include <pthread.h>
#include "base/bpf_serial.h"

static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

void bpf_serial__lock(void)
{
	pthread_mutex_lock(&loading);
}

void bpf_serial__unlock(void)
{
	pthread_mutex_unlock(&loading);
}
