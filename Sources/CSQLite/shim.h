#ifndef RMSTORE_CSQLITE_SHIM_H
#define RMSTORE_CSQLITE_SHIM_H

/*
 * SQLite 3 for ServerNotifications, its one Swift owner, plus `static inline` wrappers.
 *
 * A SwiftPM system-library target compiles no C sources, so every helper lives here as a
 * `static inline` function. They exist because Swift cannot import the function-like macros
 * SQLITE_TRANSIENT and SQLITE_STATIC (casts of integers to destructor pointers).
 */

#include <sqlite3.h>

/** Binds text that SQLite copies before returning (SQLITE_TRANSIENT). */
static inline int rmshim_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/** Binds bytes that SQLite copies before returning (SQLITE_TRANSIENT). */
static inline int rmshim_sqlite3_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

#endif
