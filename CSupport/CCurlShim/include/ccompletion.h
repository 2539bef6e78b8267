/*
 * Where synchronous sends sleep until the engine is done with their transfers: one futex word
 * for the process. A send sleeps on it with its own bit of a 32-bit set; the engine wakes, in
 * one system call, the bits of every send whose transfer it completed during a round.
 *
 * Sleeping and waking only: whether a transfer is complete is an atomic flag kept in Swift,
 * read after cxhr_completion_epoch and before every sleep. A sleep returns at once when the
 * epoch moved since it was read, so a wake between the read and the sleep is never lost.
 */
#ifndef CCOMPLETION_H
#define CCOMPLETION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The number of wakes so far (read before checking the flag). */
uint32_t cxhr_completion_epoch(void);

/* Sleeps until a wake that includes one of bits, unless the epoch is no longer epoch. May
   return early (a signal, another request's wake); the caller checks its flag again. */
void cxhr_completion_sleep(uint32_t epoch, uint32_t bits);

/* Moves the epoch on and wakes every sleeper whose bits meet bits. */
void cxhr_completion_wake(uint32_t bits);

#ifdef __cplusplus
}
#endif

#endif /* CCOMPLETION_H */
