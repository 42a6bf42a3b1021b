// ReceiptCrypto: the package's only doorway to OpenSSL 3.
//
// Ownership and thread-safety rules of this module
// ------------------------------------------------
// Every OpenSSL object that outlives one function call (an `X509`, an `EVP_PKEY`, a fetched
// `EVP_MD`) is owned by a private `final class` whose `deinit` frees it; public types are structs
// that hold such an owner and are `Sendable`. The owners are `@unchecked Sendable` because they are
// immutable after `init`: nothing in this module calls a mutating OpenSSL function on a shared
// handle after construction, and OpenSSL 3 documents the const/read paths used here (encoding,
// getters, `EVP_DigestVerify*` with a per-call `EVP_MD_CTX`, `X509_verify_cert` with a per-call
// `X509_STORE` and `X509_STORE_CTX`) as safe for concurrent use. Lazily cached certificate data is
// computed once in `Certificate.init` (via `X509_check_purpose`) before the handle is shared.
// Objects that OpenSSL mutates while working (`EVP_MD_CTX`, `X509_STORE_CTX`, `BIO`,
// `X509_STORE`, `PKCS7` being verified) are created and freed inside one call and never escape.
// The module never calls OpenSSL's global init or cleanup functions (OpenSSL 3 initialises itself
// once, thread-safely) and never touches the system trust store: trust comes only from the anchors
// the caller passes in, and validation time is always an explicit argument. The OpenSSL error
// queue is per thread; every failing operation drains it into ``CryptoError/openSSLErrors`` and
// operations clear it before they start, so no stale entry leaks into a later error.
//
// `package` declarations (the error queue, memory BIOs, DER encoding, the `X509`/`EVP_PKEY` behind
// `Certificate` and `PrivateKey`) exist for CryptoBaselines, the test-and-benchmark module that
// compares the package with OpenSSL's own PKCS#7 functions; nothing public exposes a C type.

internal import ASN1
internal import COpenSSL

// MARK: - OpenSSL error queue

package enum OpenSSLErrorQueue {
    /// Removes every entry from the calling thread's OpenSSL error queue and returns them as text.
    static func drain() -> [CryptoError.OpenSSLErrorEntry] {
        var entries: [CryptoError.OpenSSLErrorEntry] = []
        while true {
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
            if code == 0 { break }
            // Bound the loop defensively: the queue holds at most 16 entries in OpenSSL 3.
            if entries.count >= 64 {
                ERR_clear_error()
                break
            }
            let library = ERR_lib_error_string(code).map { String(cString: $0) } ?? "library \(rmshim_ERR_GET_LIB(code))"
            var reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "reason \(rmshim_ERR_GET_REASON(code))"
            // Extra text such as "Verify error:certificate has expired" (ERR_TXT_STRING).
            if flags & ERR_TXT_STRING != 0, let data {
                let detail = String(cString: data)
                if !detail.isEmpty { reason += " (\(detail))" }
            }
            entries.append(CryptoError.OpenSSLErrorEntry(library: library, reason: reason))
        }
        return entries
    }

    /// Discards the calling thread's OpenSSL error queue.
    package static func clear() {
        ERR_clear_error()
    }

    /// The drained queue joined into one line (for result types that carry a message string).
    package static func drainedMessage() -> String {
        drain().map(\.description).joined(separator: "; ")
    }
}

// MARK: - Byte helpers

/// A single byte that gives OpenSSL a valid, non-NULL pointer when the caller's buffer is empty.
private let emptyByte: [UInt8] = [0]

/// Calls `body` with a non-NULL base pointer and the count of `bytes`, even when `bytes` is empty.
func withNonNullBytes<R>(
    _ bytes: UnsafeRawBufferPointer,
    _ body: (UnsafePointer<UInt8>, Int) -> R
) -> R {
    if let base = bytes.baseAddress, bytes.count > 0 {
        return body(base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }
    return emptyByte.withUnsafeBufferPointer { buffer in
        // `emptyByte` has one element, so its base address exists; fall back to a fresh buffer otherwise.
        guard let base = buffer.baseAddress else {
            let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
            defer { scratch.deallocate() }
            return body(UnsafePointer(scratch), 0)
        }
        return body(base, 0)
    }
}

/// Calls `body` with a non-NULL base pointer and the count of a byte collection.
func withNonNullBytes<C: ContiguousBytesCollection, R>(
    _ bytes: C,
    _ body: (UnsafePointer<UInt8>, Int) -> R
) -> R {
    bytes.withRawBytes { raw in withNonNullBytes(raw, body) }
}

/// `[UInt8]` and `ArraySlice<UInt8>`: contiguous byte storage the module can hand to OpenSSL.
protocol ContiguousBytesCollection {
    func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
}

extension Array: ContiguousBytesCollection where Element == UInt8 {
    func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(body)
    }
}

extension ArraySlice: ContiguousBytesCollection where Element == UInt8 {
    func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(body)
    }
}

/// Calls a typed-throwing `body` with the raw bytes of a byte collection. (The standard library's
/// `withUnsafeBytes` rethrows untyped errors, so the error is carried through a `Result`.)
func withRawBytes<C: ContiguousBytesCollection, R>(
    _ bytes: C,
    _ body: (UnsafeRawBufferPointer) throws(CryptoError) -> R
) throws(CryptoError) -> R {
    let result: Result<R, CryptoError> = bytes.withRawBytes { raw in
        do throws(CryptoError) {
            return .success(try body(raw))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}

/// The bytes of an `ASN1_STRING` (also `ASN1_OCTET_STRING`, `ASN1_INTEGER`, `ASN1_BIT_STRING`).
func asn1StringBytes(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8] {
    guard let string else { return [] }
    let length = Int(ASN1_STRING_length(string))
    guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: length))
}

/// The identifier an `ASN1_OBJECT` holds, read from its content octets; nil for a missing object
/// or one ``ASN1ObjectIdentifier`` cannot represent (an arc beyond 64 bits).
func objectIdentifier(_ object: OpaquePointer?) -> ASN1ObjectIdentifier? {
    guard let object, let data = OBJ_get0_data(object) else { return nil }
    let content = Array(UnsafeBufferPointer(start: data, count: OBJ_length(object)))
    return try? ASN1ObjectIdentifier(validatingContent: content[...])
}

/// Owns an `ASN1_OBJECT` made from an ``ASN1ObjectIdentifier``.
final class OwnedASN1Object {
    let pointer: OpaquePointer

    init(_ oid: ASN1ObjectIdentifier) throws(CryptoError) {
        var writer = DERWriter()
        writer.appendObjectIdentifier(oid)
        let der = writer.bytes
        OpenSSLErrorQueue.clear()
        let object: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ASN1_OBJECT(nil, &cursor, buffer.count)
        }
        guard let object else {
            throw .openSSL(.invalidArgument, "OpenSSL rejected the object identifier \(oid)")
        }
        pointer = object
    }

    deinit { ASN1_OBJECT_free(pointer) }
}

// MARK: - Memory BIO

/// A memory BIO, created and freed within one call.
package final class MemoryBIO {
    package let pointer: OpaquePointer

    /// An empty, writable memory BIO.
    package init() throws(CryptoError) {
        guard let method = BIO_s_mem(), let bio = BIO_new(method) else { throw .allocation("a memory BIO") }
        pointer = bio
    }

    deinit { BIO_free(pointer) }

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) throws(CryptoError) {
        var offset = 0
        while offset < bytes.count {
            let chunk = min(bytes.count - offset, Int(Int32.max))
            let written = bytes.withUnsafeBytes { raw -> Int32 in
                guard let base = raw.baseAddress else { return -1 }
                return BIO_write(pointer, base + offset, Int32(chunk))
            }
            guard written > 0 else { throw .openSSL(.operationFailed, "could not write to a memory BIO") }
            offset += Int(written)
        }
    }

    /// A copy of everything written so far.
    package func contents() -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = rmshim_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }
}

/// Runs `body` with a read-only memory BIO over `bytes`. The BIO does not copy the bytes, so it
/// must not escape `body`.
package func withReadOnlyBIO<R>(_ bytes: [UInt8], _ body: (OpaquePointer) throws(CryptoError) -> R) throws(CryptoError) -> R {
    guard bytes.count <= Int(Int32.max) else { throw .plain(.invalidArgument, "input larger than 2 GiB") }
    let result: Result<R, CryptoError> = withNonNullBytes(bytes) { base, count in
        guard let bio = BIO_new_mem_buf(base, Int32(count)) else { return .failure(.allocation("a memory BIO")) }
        defer { BIO_free(bio) }
        do throws(CryptoError) {
            return .success(try body(bio))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}

/// Encodes an OpenSSL object with an `i2d_*` function into a fresh `[UInt8]`.
package func encodeDER(_ encoder: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
    let length = Int(encoder(nil))
    guard length > 0 else { return nil }
    var output = [UInt8](repeating: 0, count: length)
    let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor = buffer.baseAddress
        return encoder(&cursor)
    }
    guard Int(written) == length else { return nil }
    return output
}

/// A passphrase callback that supplies no passphrase, so that OpenSSL never prompts on a terminal
/// when asked to read an encrypted PEM key; such keys fail to load instead.
let refusePassphrase:
    @convention(c) (
        UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, _, _, _ in -1 }
