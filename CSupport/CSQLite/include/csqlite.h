/*
 * CSQLite: SQLite (the system's libsqlite3) for the HTTP cache's index, loaded when the first
 * cache opens (cxhr_sqlite_load), not when the program starts. Swift takes the types and
 * constants from <sqlite3.h> and calls SQLite through the wrappers below (each the sqlite3_
 * function of the same name); cxhr_sqlite_bind_text adds what Swift cannot pass:
 * SQLITE_TRANSIENT is a macro that casts -1 to a function pointer.
 */
#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>
#include <stdint.h>

/* Internal to the library: not exported from libcurlxhr.so, whose C interface is curlxhr.h. */
#pragma GCC visibility push(hidden)

/* Loads libsqlite3.so.0 once per process: NULL when its functions are there, else why not.
 * Every other call here needs it to have returned NULL. */
const char *cxhr_sqlite_load(void);

int cxhr_sqlite3_open_v2(const char *file, sqlite3 **database, int flags, const char *vfs);
int cxhr_sqlite3_close(sqlite3 *database);
const char *cxhr_sqlite3_errmsg(sqlite3 *database);
int cxhr_sqlite3_errcode(sqlite3 *database);
int cxhr_sqlite3_busy_timeout(sqlite3 *database, int milliseconds);
int cxhr_sqlite3_exec(sqlite3 *database, const char *sql, int (*callback)(void *, int, char **, char **),
                      void *argument, char **error);
int cxhr_sqlite3_prepare_v2(sqlite3 *database, const char *sql, int length, sqlite3_stmt **statement, const char **tail);
int cxhr_sqlite3_prepare_v3(sqlite3 *database, const char *sql, int length, unsigned int flags,
                            sqlite3_stmt **statement, const char **tail);
int cxhr_sqlite3_step(sqlite3_stmt *statement);
int cxhr_sqlite3_reset(sqlite3_stmt *statement);
int cxhr_sqlite3_clear_bindings(sqlite3_stmt *statement);
int cxhr_sqlite3_finalize(sqlite3_stmt *statement);
int cxhr_sqlite3_bind_int64(sqlite3_stmt *statement, int index, sqlite3_int64 value);
int cxhr_sqlite3_bind_double(sqlite3_stmt *statement, int index, double value);
int cxhr_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length, void (*destructor)(void *));
sqlite3_int64 cxhr_sqlite3_column_int64(sqlite3_stmt *statement, int column);
double cxhr_sqlite3_column_double(sqlite3_stmt *statement, int column);
const unsigned char *cxhr_sqlite3_column_text(sqlite3_stmt *statement, int column);
sqlite3_int64 cxhr_sqlite3_last_insert_rowid(sqlite3 *database);

/* sqlite3_bind_text with SQLITE_TRANSIENT: SQLite copies the bytes. */
int cxhr_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length);

/* The cache folder's change counter, a word in a file every process maps shared: read with
 * acquire order, counted up with release order (after a write's commit). */
uint64_t cxhr_shared_counter_load(const uint64_t *word);
void cxhr_shared_counter_add(uint64_t *word);

#pragma GCC visibility pop

#endif
