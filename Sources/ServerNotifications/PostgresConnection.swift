import CLibPQ
import Foundation

/// One libpq connection (not thread-safe: the pool lends it to one caller at a time). Internal: no
/// libpq type leaves this module.
final class PostgresConnection {
    private let handle: OpaquePointer

    /// Connects with `parameters` (keyword, value); a `dbname` holding a URL is expanded.
    init(parameters: [(String, String)]) throws(NotificationStoreError) {
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            for pointer in keywords { free(pointer) }
            for pointer in values { free(pointer) }
        }
        let keywordPointers: [UnsafePointer<CChar>?] = keywords.map { UnsafePointer($0) } + [nil]
        let valuePointers: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        guard let connection = PQconnectdbParams(keywordPointers, valuePointers, 1) else {
            throw NotificationStoreError(.unavailable, "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw NotificationStoreError(.unavailable, "cannot connect to PostgreSQL: \(message)")
        }
        // Server notices (a NOTICE, a WARNING when the server shuts down) are not printed.
        _ = PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is still usable (libpq marks it bad once the server is gone).
    var isBroken: Bool { PQstatus(handle) != CONNECTION_OK }

    /// `host:port/database` of the connection.
    var location: String {
        func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        return "\(text(PQhost(handle))):\(text(PQport(handle)))/\(text(PQdb(handle)))"
    }

    /// Runs `sql` with text parameters (nil is NULL) and returns its rows as text.
    /// - Throws: ``NotificationStoreError`` with the server's message and SQLSTATE.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = []) throws(NotificationStoreError) -> PostgresRows {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in copies { free(pointer) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        let result: OpaquePointer? =
            parameters.isEmpty
            ? PQexec(handle, sql)
            : PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        guard let result else {
            throw NotificationStoreError(.failed, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))")
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = rmshim_PQresultSQLState(result).map { String(cString: $0) }
            let message = Self.trimmed(PQresultErrorMessage(result))
            let text = message.isEmpty ? Self.trimmed(PQerrorMessage(handle)) : message
            throw NotificationStoreError(.failed, "PostgreSQL\(state.map { " \($0)" } ?? ""): \(text)")
        }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
                    values.append(nil)
                } else if let pointer = PQgetvalue(result, Int32(row), Int32(column)) {
                    let count = Int(PQgetlength(result, Int32(row), Int32(column)))
                    values.append(
                        pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
                            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                        })
                } else {
                    values.append(nil)
                }
            }
            rows.append(values)
        }
        return PostgresRows(rows: rows)
    }

    private static func trimmed(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        (pointer.map { String(cString: $0) } ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Rows of a result, as text (nil for NULL).
struct PostgresRows {
    let rows: [[String?]]

    /// The first column of the first row.
    var scalar: String? { rows.first?.first ?? nil }
}

/// Connections to one database, lent to one caller at a time and kept open between uses.
final class PostgresPool: @unchecked Sendable {
    private let parameters: [(String, String)]
    private let maximumConnections: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var openCount = 0

    init(parameters: [(String, String)], maximumConnections: Int) {
        self.parameters = parameters
        self.maximumConnections = max(1, maximumConnections)
    }

    /// Runs `body` with a connection (a new one when none is idle and fewer than the maximum are
    /// open; otherwise waits for one). A connection that broke during `body` is closed, not kept.
    func withConnection<T>(_ body: (PostgresConnection) throws(NotificationStoreError) -> T) throws(NotificationStoreError) -> T {
        condition.lock()
        while idle.isEmpty && openCount >= maximumConnections { condition.wait() }
        var connection = idle.popLast()
        if connection == nil { openCount += 1 }
        condition.unlock()
        if connection == nil {
            do throws(NotificationStoreError) {
                connection = try PostgresConnection(parameters: parameters)
            } catch {
                release(nil)
                throw error
            }
        }
        guard let connection else { throw NotificationStoreError(.unavailable, "no connection") }
        do throws(NotificationStoreError) {
            let value = try body(connection)
            release(connection.isBroken ? nil : connection)
            return value
        } catch {
            release(connection.isBroken ? nil : connection)
            throw error
        }
    }

    private func release(_ connection: PostgresConnection?) {
        condition.lock()
        if let connection {
            idle.append(connection)
        } else {
            openCount -= 1
        }
        condition.signal()
        condition.unlock()
    }
}
