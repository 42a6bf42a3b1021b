package import Foundation
package import Internals

/// A UTC instant from calendar fields.
package func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
    let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    return calendar.date(from: components) ?? Date(timeIntervalSince1970: .nan)
}

/// Lowercase hex of `bytes`.
package func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// The bytes of a hex string (pairs of digits; anything else is skipped).
package func bytes(hex text: String) -> [UInt8] {
    var result: [UInt8] = []
    var iterator = text.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        if let byte = UInt8(String([high, low]), radix: 16) { result.append(byte) }
    }
    return result
}

extension SplitMix64 {
    /// `count` garbage bytes from the package's seeded generator.
    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// An error a test throws on purpose, compared by name.
package struct TestError: Error, Equatable {
    /// What failed.
    package let name: String
    /// An error called `name`.
    package init(_ name: String) { self.name = name }
}

/// The folder every ``temporaryDirectory(_:fileID:)`` of this test process lies in, removed when
/// the process exits normally (a crashed run leaves it, for its files to be looked at).
private let testProcessDirectory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("rmstore-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: testProcessDirectory) }
    return url
}()

/// A fresh temporary directory per call, named after the calling test target and `label`, inside
/// this process's folder (removed at exit).
package func temporaryDirectory(_ label: String = #function, fileID: String = #fileID) -> URL {
    let safe = label.filter { $0.isLetter || $0.isNumber }
    let module = fileID.split(separator: "/").first.map(String.init) ?? "Tests"
    let url = testProcessDirectory.appendingPathComponent("\(module)-\(safe)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
