#include "csqlite.h"

int cxhr_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length)
{
  return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

uint64_t cxhr_shared_counter_load(const uint64_t *word)
{
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

void cxhr_shared_counter_add(uint64_t *word)
{
  __atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
}
