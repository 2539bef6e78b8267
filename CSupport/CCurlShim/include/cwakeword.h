/*
 * One futex word for the process, where the library's threads sleep until the engine has
 * something for them: synchronous sends until their transfers are complete, the callback
 * thread until callbacks are due. A sleeper sleeps with its own bits of a 32-bit set; the
 * engine wakes, in one system call, every sleeper whose bits meet the bits it wakes.
 *
 * Sleeping and waking only: what a sleeper waits for is state kept in Swift, checked after
 * cxhr_wake_epoch and before every sleep. A sleep returns at once when the epoch moved since
 * it was read, so a wake between the check and the sleep is never lost.
 */
#ifndef CWAKEWORD_H
#define CWAKEWORD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/* The number of wakes so far: read before checking the state. */
uint32_t cxhr_wake_epoch(void);

/* Sleeps until a wake that meets bits, unless the epoch is no longer epoch. May return early
   (a signal, a wake for other state); the caller checks its state again. */
void cxhr_wake_sleep(uint32_t epoch, uint32_t bits);

/* Moves the epoch on and wakes every sleeper whose bits meet bits. */
void cxhr_wake(uint32_t bits);

/* Names the calling thread (the first 15 bytes of name), as top -H, perf and debuggers show
   it: the library's own threads would otherwise carry the name of the thread that started
   them, often a Dispatch worker's. (pthread_setname_np, which Swift's Glibc does not
   declare.) */
void cxhr_name_this_thread(const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* CWAKEWORD_H */
