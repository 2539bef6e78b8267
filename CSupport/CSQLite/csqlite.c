#include "csqlite.h"

int cxhr_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length)
{
  return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
