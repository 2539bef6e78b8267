/*
 * CSQLite: SQLite (the system's libsqlite3) for the HTTP cache's index. Swift imports
 * <sqlite3.h> directly; this header adds what it cannot call: SQLITE_TRANSIENT is a macro
 * that casts -1 to a function pointer.
 */
#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>
#include <stdint.h>

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/* sqlite3_bind_text with SQLITE_TRANSIENT: SQLite copies the bytes. */
int cxhr_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length);

/* The cache folder's change counter, a word in a file every process maps shared: read with
 * acquire order, counted up with release order (after a write's commit). */
uint64_t cxhr_shared_counter_load(const uint64_t *word);
void cxhr_shared_counter_add(uint64_t *word);

#pragma GCC visibility pop

#endif
