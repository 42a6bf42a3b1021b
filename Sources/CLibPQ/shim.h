#ifndef RMSTORE_CLIBPQ_SHIM_H
#define RMSTORE_CLIBPQ_SHIM_H

/*
 * libpq, PostgreSQL's C client library, for ServerNotifications, its one Swift owner, plus
 * `static inline` wrappers.
 *
 * A SwiftPM system-library target compiles no C sources, so every helper lives here as a
 * `static inline` function. They exist because Swift does not import character-literal macros
 * such as PG_DIAG_SQLSTATE.
 */

#include <libpq-fe.h>
#include <postgres_ext.h>

/** The five-character SQLSTATE of a failed result (NULL when there is none). */
static inline const char *rmshim_PQresultSQLState(const PGresult *result) {
    return result == NULL ? NULL : PQresultErrorField(result, PG_DIAG_SQLSTATE);
}

#endif
