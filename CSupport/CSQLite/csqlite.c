#include "csqlite.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/*
 * libsqlite3 is loaded when the first cache opens, not when the program starts: a program that
 * uses no cache (most runs of xhr, most requests) never maps it nor binds its symbols. Each
 * function the cache calls is one pointer, resolved once, and one wrapper below.
 */
#define CXHR_SQLITE_FUNCTIONS(X)                                                                   \
  X(int, open_v2, (const char *file, sqlite3 **database, int flags, const char *vfs),               \
    (file, database, flags, vfs))                                                                   \
  X(int, close, (sqlite3 *database), (database))                                                    \
  X(const char *, errmsg, (sqlite3 *database), (database))                                          \
  X(int, errcode, (sqlite3 *database), (database))                                                  \
  X(int, busy_timeout, (sqlite3 *database, int milliseconds), (database, milliseconds))             \
  X(int, exec, (sqlite3 *database, const char *sql, int (*callback)(void *, int, char **, char **), \
                void *argument, char **error),                                                      \
    (database, sql, callback, argument, error))                                                     \
  X(int, prepare_v2, (sqlite3 *database, const char *sql, int length, sqlite3_stmt **statement,     \
                      const char **tail),                                                           \
    (database, sql, length, statement, tail))                                                       \
  X(int, prepare_v3, (sqlite3 *database, const char *sql, int length, unsigned int flags,           \
                      sqlite3_stmt **statement, const char **tail),                                 \
    (database, sql, length, flags, statement, tail))                                                \
  X(int, step, (sqlite3_stmt *statement), (statement))                                              \
  X(int, reset, (sqlite3_stmt *statement), (statement))                                             \
  X(int, clear_bindings, (sqlite3_stmt *statement), (statement))                                   \
  X(int, finalize, (sqlite3_stmt *statement), (statement))                                         \
  X(int, bind_int64, (sqlite3_stmt *statement, int index, sqlite3_int64 value),                     \
    (statement, index, value))                                                                      \
  X(int, bind_double, (sqlite3_stmt *statement, int index, double value), (statement, index, value)) \
  X(int, bind_text, (sqlite3_stmt *statement, int index, const char *text, int length,              \
                     void (*destructor)(void *)),                                                   \
    (statement, index, text, length, destructor))                                                   \
  X(sqlite3_int64, column_int64, (sqlite3_stmt *statement, int column), (statement, column))       \
  X(double, column_double, (sqlite3_stmt *statement, int column), (statement, column))             \
  X(const unsigned char *, column_text, (sqlite3_stmt *statement, int column), (statement, column)) \
  X(sqlite3_int64, last_insert_rowid, (sqlite3 *database), (database))

#define CXHR_SQLITE_POINTER(type, name, parameters, arguments) static type(*loaded_##name) parameters;
CXHR_SQLITE_FUNCTIONS(CXHR_SQLITE_POINTER)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_problem[512];

static void load(void)
{
  void *library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(load_problem, sizeof load_problem, "SQLite could not be loaded (%s)", reason ? reason : "libsqlite3.so.0");
    return;
  }
#define CXHR_SQLITE_RESOLVE(type, name, parameters, arguments)                                     \
  if ((*(void **)&loaded_##name = dlsym(library, "sqlite3_" #name)) == NULL) {                      \
    snprintf(load_problem, sizeof load_problem, "SQLite could not be loaded (no sqlite3_%s in libsqlite3.so.0)", #name); \
    return;                                                                                         \
  }
  CXHR_SQLITE_FUNCTIONS(CXHR_SQLITE_RESOLVE)
}

const char *cxhr_sqlite_load(void)
{
  pthread_once(&load_once, load);
  return load_problem[0] ? load_problem : NULL;
}

#define CXHR_SQLITE_WRAPPER(type, name, parameters, arguments)                                      \
  type cxhr_sqlite3_##name parameters { return loaded_##name arguments; }
CXHR_SQLITE_FUNCTIONS(CXHR_SQLITE_WRAPPER)

int cxhr_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length)
{
  return loaded_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

uint64_t cxhr_shared_counter_load(const uint64_t *word)
{
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

void cxhr_shared_counter_add(uint64_t *word)
{
  __atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
}
