import CYardsticks
import Foundation
import ReceiptCrypto
import ReceiptSigning
import Receipts

/// The C yardsticks (target `CYardsticks`) as the Benchmarks call them.
enum CYardstick {
    /// In-app records the zero-allocation C TLV walker finds in a DER receipt, or -1 when it
    /// refuses the bytes (BER, malformed).
    static func walk(_ bytes: [UInt8]) -> Int {
        var result = cy_walk_result()
        let status = bytes.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return cy_walk_receipt(base, buffer.count, &result)
        }
        return status == 0 ? Int(result.records) : -1
    }
}

/// `--write-corpus DIR`: the benchmark's DER receipts (1, 1,000 and 10,000 purchases) signed by a
/// fresh test PKI, and that PKI's root, as files for callgrind runs of two builds on the same bytes.
enum Corpus {
    static func write(to directory: String) throws {
        let pki = try TestPKI.generate()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for n in [1, 1000, 10000] {
            let bytes = try pki.signer().sign(SyntheticReceipts.receipt(purchases: n), layout: .appStore)
            try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent("\(n).der"))
        }
        try Data(pki.root.derEncoded).write(to: URL(fileURLWithPath: directory).appendingPathComponent("root.der"))
    }
}
