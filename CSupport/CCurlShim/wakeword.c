#define _GNU_SOURCE
#include "cwakeword.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint32_t epoch;

uint32_t cxhr_wake_epoch(void)
{
  return atomic_load(&epoch);
}

void cxhr_wake_sleep(uint32_t seen, uint32_t bits)
{
  /* The kernel sleeps only while the word still holds seen, atomically with cxhr_wake. */
  syscall(SYS_futex, (uint32_t *)&epoch, FUTEX_WAIT_BITSET_PRIVATE, seen, NULL, NULL, bits);
}

void cxhr_wake(uint32_t bits)
{
  atomic_fetch_add(&epoch, 1);
  syscall(SYS_futex, (uint32_t *)&epoch, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, bits);
}

void cxhr_name_this_thread(const char *name)
{
  char short_name[16];
  strncpy(short_name, name, sizeof short_name - 1);
  short_name[sizeof short_name - 1] = 0;
  pthread_setname_np(pthread_self(), short_name);
}
