import CLibPQ
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A value sent to PostgreSQL: text goes as bytes with their length (binary format), so it
/// arrives exactly, U+0000 included, and the server refuses what its `text` cannot hold instead of
/// libpq cutting it at a NUL; numbers and Booleans go as their text.
enum PostgresParameter {
    /// A text value (nil is NULL).
    case text(String?)
    /// A number or Boolean in PostgreSQL's text form (nil is NULL).
    case literal(String?)
}

/// One libpq connection (not thread-safe: the pool lends it to one caller at a time). Internal: no
/// libpq type leaves this module. Every call has a deadline: the connection is non-blocking and
/// each wait is a `poll` of its socket until the deadline; a call that passes it leaves the
/// connection unusable (``isBroken``), so the pool closes it.
final class PostgresConnection {
    private let handle: OpaquePointer
    /// The pool's number of this connection: connections opened later have larger numbers.
    let serial: Int
    /// Whether a call passed its deadline (the connection may still carry its answer, so it is
    /// not used again).
    private(set) var timedOut = false

    /// Connects with `parameters` (keyword, value; a `dbname` holding a URL is expanded) by
    /// `deadline`.
    init(parameters: [(String, String)], serial: Int, deadline: ContinuousClock.Instant) throws(NotificationStoreError) {
        self.serial = serial
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            for pointer in keywords { free(pointer) }
            for pointer in values { free(pointer) }
        }
        let keywordPointers: [UnsafePointer<CChar>?] = keywords.map { UnsafePointer($0) } + [nil]
        let valuePointers: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        guard let connection = PQconnectStartParams(keywordPointers, valuePointers, 1) else {
            throw NotificationStoreError(.unavailable, "libpq could not allocate a connection")
        }
        var polling = PGRES_POLLING_WRITING
        while PQstatus(connection) != CONNECTION_BAD, polling != PGRES_POLLING_OK, polling != PGRES_POLLING_FAILED {
            let events = polling == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
            guard Self.wait(PQsocket(connection), events: events, until: deadline) else {
                PQfinish(connection)
                throw NotificationStoreError(.unavailable, "cannot connect to PostgreSQL: no answer within the deadline")
            }
            polling = PQconnectPoll(connection)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw NotificationStoreError(.unavailable, "cannot connect to PostgreSQL: \(message)")
        }
        // Server notices (a NOTICE, a WARNING when the server shuts down) are not printed.
        _ = PQsetNoticeProcessor(connection, { _, _ in }, nil)
        _ = PQsetnonblocking(connection, 1)
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is no longer usable (libpq marks it bad once the server is gone; a
    /// call that passed its deadline marks it too).
    var isBroken: Bool { timedOut || PQstatus(handle) != CONNECTION_OK }

    /// `host:port/database` of the connection.
    var location: String {
        func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        return "\(text(PQhost(handle))):\(text(PQport(handle)))/\(text(PQdb(handle)))"
    }

    /// Waits until `socket` is ready for `events` (or failed), or `deadline` passed (false).
    private static func wait(_ socket: Int32, events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        guard socket >= 0 else { return true }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: milliseconds))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }
        }
    }

    /// Runs `sql` (with parameters: one statement; without: any number of `;`-separated
    /// statements) and returns the rows of its last result as text, by `deadline`.
    /// - Throws: ``NotificationStoreError`` with the server's message and SQLSTATE, or a timeout
    ///   (after which the connection is broken).
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresParameter] = [], deadline: ContinuousClock.Instant) throws(NotificationStoreError)
        -> PostgresRows
    {
        guard !timedOut else { throw NotificationStoreError(.failed, "PostgreSQL: the connection passed a deadline") }
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { for buffer in buffers { free(buffer) } }
        for parameter in parameters {
            switch parameter {
            case .text(nil), .literal(nil):
                buffers.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let value?), .literal(let value?):
                let bytes = Array(value.utf8)
                let buffer = malloc(bytes.count + 1)?.assumingMemoryBound(to: CChar.self)
                if let buffer {
                    bytes.withUnsafeBytes { raw in
                        if let base = raw.baseAddress { memcpy(buffer, base, bytes.count) }
                    }
                    buffer[bytes.count] = 0
                }
                buffers.append(buffer)
                lengths.append(Int32(clamping: bytes.count))
                if case .text = parameter { formats.append(1) } else { formats.append(0) }
            }
        }
        let pointers: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0) } }
        let sent =
            parameters.isEmpty
            ? PQsendQuery(handle, sql)
            : PQsendQueryParams(handle, sql, Int32(pointers.count), nil, pointers, lengths, formats, 0)
        guard sent == 1 else { throw NotificationStoreError(.failed, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))") }
        // Send everything queued, reading meanwhile so that the server never blocks on its output.
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { break }
            guard flushed > 0 else { throw NotificationStoreError(.failed, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))") }
            try waitForSocket(events: Int16(POLLOUT | POLLIN), until: deadline)
            guard PQconsumeInput(handle) == 1 else {
                throw NotificationStoreError(.failed, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))")
            }
        }
        var failure: NotificationStoreError?
        var rows = PostgresRows(rows: [])
        while true {
            while PQisBusy(handle) != 0 {
                try waitForSocket(events: Int16(POLLIN), until: deadline)
                guard PQconsumeInput(handle) == 1 else {
                    throw NotificationStoreError(.failed, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))")
                }
            }
            guard let result = PQgetResult(handle) else { break }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                rows = Self.rows(of: result)
            } else if failure == nil {
                let state = rmshim_PQresultSQLState(result).map { String(cString: $0) }
                let message = Self.trimmed(PQresultErrorMessage(result))
                let text = message.isEmpty ? Self.trimmed(PQerrorMessage(handle)) : message
                failure = NotificationStoreError(.failed, "PostgreSQL\(state.map { " \($0)" } ?? ""): \(text)")
            }
        }
        if let failure { throw failure }
        return rows
    }

    /// Runs `statements` in one transaction holding the advisory lock `lockKey` (so that two
    /// processes changing the schema at once take turns), rolling back when a statement fails.
    func executeLocked(_ statements: String, lockKey: Int64, deadline: ContinuousClock.Instant) throws(NotificationStoreError) {
        do throws(NotificationStoreError) {
            try execute("BEGIN", deadline: deadline)
            try execute("SELECT pg_advisory_xact_lock(\(lockKey))", deadline: deadline)
            try execute(statements, deadline: deadline)
            try execute("COMMIT", deadline: deadline)
        } catch {
            if !isBroken { _ = try? execute("ROLLBACK", deadline: deadline) }
            throw error
        }
    }

    /// Waits for the socket, or marks the connection timed out and throws.
    private func waitForSocket(events: Int16, until deadline: ContinuousClock.Instant) throws(NotificationStoreError) {
        guard Self.wait(PQsocket(handle), events: events, until: deadline) else {
            timedOut = true
            throw NotificationStoreError(.failed, "PostgreSQL did not answer within the deadline")
        }
    }

    private static func rows(of result: OpaquePointer) -> PostgresRows {
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
///
/// - Waiting for a free connection has the caller's deadline.
/// - A connection that broke (the server went away, a call passed its deadline) is closed, and so
///   is every connection opened before that moment, idle or lent (when it comes back): after a
///   restart of the server they are all stale, and the next caller gets a new connection.
/// - A new connection runs `setUp` before its first use (the session's checks).
final class PostgresPool: @unchecked Sendable {
    // @unchecked: every mutable field is read and written under `condition`.
    private let parameters: [(String, String)]
    private let maximumConnections: Int
    private let setUp: (PostgresConnection, ContinuousClock.Instant) throws(NotificationStoreError) -> Void
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var openCount = 0
    private var nextSerial = 0
    /// Connections numbered below this are closed instead of being lent again.
    private var discardBelow = 0
    private var isClosed = false

    init(
        parameters: [(String, String)], maximumConnections: Int,
        setUp: @escaping (PostgresConnection, ContinuousClock.Instant) throws(NotificationStoreError) -> Void
    ) {
        self.parameters = parameters
        self.maximumConnections = max(1, maximumConnections)
        self.setUp = setUp
    }

    /// Runs `body` with a connection (an idle one, a new one when fewer than the maximum are open,
    /// or the next one returned, waiting until `deadline`). A connection that broke during `body`
    /// is closed, with every connection opened before it.
    func withConnection<T>(
        deadline: ContinuousClock.Instant, connect: ContinuousClock.Instant? = nil,
        _ body: (PostgresConnection) throws(NotificationStoreError) -> T
    ) throws(NotificationStoreError) -> T {
        condition.lock()
        while !isClosed, idle.isEmpty, openCount >= maximumConnections {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                condition.unlock()
                throw NotificationStoreError(.unavailable, "no PostgreSQL connection became free within the deadline")
            }
            _ = condition.wait(until: Date().addingTimeInterval(remaining.seconds))
        }
        guard !isClosed else {
            condition.unlock()
            throw NotificationStoreError(.readOnly, "the PostgreSQL store is closed")
        }
        var connection = idle.popLast()
        let serial = nextSerial
        if connection == nil {
            openCount += 1
            nextSerial += 1
        }
        condition.unlock()
        if connection == nil {
            do throws(NotificationStoreError) {
                let opened = try PostgresConnection(parameters: parameters, serial: serial, deadline: min(deadline, connect ?? deadline))
                try setUp(opened, deadline)
                connection = opened
            } catch {
                // The server cannot be reached: the idle connections are stale too.
                release(nil, discardingOlderThan: serial)
                throw error
            }
        }
        guard let connection else { throw NotificationStoreError(.unavailable, "no connection") }
        do throws(NotificationStoreError) {
            let value = try body(connection)
            release(connection, discardingOlderThan: connection.isBroken ? connection.serial : nil)
            return value
        } catch {
            release(connection, discardingOlderThan: connection.isBroken ? connection.serial : nil)
            throw error
        }
    }

    /// Returns a connection (nil: one that could not be opened); with `serial`, every connection
    /// numbered at or below it, and every connection opened before now, is closed.
    private func release(_ connection: PostgresConnection?, discardingOlderThan serial: Int?) {
        var closing: [PostgresConnection] = []
        condition.lock()
        if serial != nil {
            discardBelow = max(discardBelow, nextSerial)
            closing = idle
            openCount -= idle.count
            idle = []
        }
        if let connection {
            if connection.isBroken || connection.serial < discardBelow || isClosed {
                openCount -= 1
                closing.append(connection)
            } else {
                idle.append(connection)
            }
        } else {
            openCount -= 1
        }
        condition.broadcast()
        condition.unlock()
        withExtendedLifetime(closing) {}
    }

    /// Closes the idle connections; connections lent now are closed when they come back, and
    /// later calls fail.
    func close() {
        condition.lock()
        isClosed = true
        let closing = idle
        openCount -= idle.count
        idle = []
        condition.broadcast()
        condition.unlock()
        withExtendedLifetime(closing) {}
    }
}
