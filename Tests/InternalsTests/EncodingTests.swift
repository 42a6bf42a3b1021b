import Foundation
import Internals
import Testing

@Suite("Base64 and hex")
struct EncodingTests {
    @Test func lenientBase64_skipsWhitespace_andAcceptsMissingPadding() throws {
        #expect(try Base64.decode(Array("TWFu".utf8)) == Array("Man".utf8))
        #expect(try Base64.decode(Array("TWE=\n".utf8)) == Array("Ma".utf8))
        #expect(try Base64.decode(Array("TQ".utf8)) == Array("M".utf8))
        #expect(try Base64.decode(Array("TR".utf8)) == Array("M".utf8), "lenient rules ignore the unused bits")
    }

    @Test(arguments: [("T", 1), ("TQ=a", 3), ("T===", 1), ("TQ==TQ==", 4), ("TW\u{1}u", 2)])
    func badBase64_failsAtTheOffendingOffset(text: String, offset: Int) {
        #expect(throws: Base64.Failure.self) { try Base64.decode(Array(text.utf8)) }
        do {
            _ = try Base64.decode(Array(text.utf8))
        } catch {
            #expect(error.offset == offset, "\(text): \(error.reason)")
        }
    }

    @Test func strictURL_rejectsPadding_whitespace_theStandardAlphabet_andNonCanonicalTails() throws {
        #expect(try Base64.decode(Array("-_8".utf8), rules: .strictURL) == [0xFB, 0xFF])
        for bad in ["TQ==", "TQ=", " TQ", "TQ\n", "+_8", "/_8", "TR", "TWF"] {
            #expect(throws: Base64.Failure.self, "\(bad)") { try Base64.decode(Array(bad.utf8), rules: .strictURL) }
        }
        // Of the 16 spellings of one final byte, only the one with zero unused bits decodes.
        let decoded = (0..<16).compactMap { low in
            try? Base64.decode(Array("T".utf8) + [Array("QRSTUVWXYZabcdef".utf8)[low]], rules: .strictURL)
        }
        #expect(decoded == [Array("M".utf8)])
    }

    @Test func encodeRoundTrips_inBothAlphabets() throws {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 251) }
            #expect(try Base64.decode(Array(Base64.encode(bytes).utf8)) == bytes)
            #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString())
            let url = Base64.encode(bytes, alphabet: .url)
            #expect(!url.contains("=") && !url.contains("+") && !url.contains("/"))
            #expect(try Base64.decode(Array(url.utf8), rules: .strictURL) == bytes)
            #expect(
                url
                    == Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
        }
        #expect(Base64.looksLikeBase64(Array("TWFu\n".utf8)))
        #expect(!Base64.looksLikeBase64(Array("TW-u".utf8)))
    }

    @Test func hex_roundTrips_andRejectsOddOrForeignText() {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(Hex.encode([0x00, 0xAB, 0xFF], uppercase: true) == "00ABFF")
        #expect(Hex.decode(Array("00abFF".utf8)) == [0x00, 0xAB, 0xFF])
        #expect(Hex.decode(Array("abc".utf8)) == nil)
        #expect(Hex.decode(Array("zz".utf8)) == nil)
    }

    @Test func bytesEqual_comparesContents() {
        let a: [UInt8] = [1, 2, 3, 4]
        #expect(bytesEqual(a[1...], [2, 3, 4][...]))
        #expect(!bytesEqual(a[...], [1, 2, 3][...]))
        #expect(bytesEqual([][...], [][...]))
    }

    @Test func civilCalendar_roundTripsDayNumbers_andKnowsLeapYears() {
        #expect(CivilCalendar.daysSince1970(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.daysSince1970(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilCalendar.daysSince1970(year: 1, month: 1, day: 1) == -719_162)
        for days in stride(from: Int64(-800_000), through: 3_000_000, by: 997) {
            let (y, m, d) = CivilCalendar.date(daysSince1970: days)
            #expect(CivilCalendar.daysSince1970(year: y, month: m, day: d) == days)
        }
        #expect(CivilCalendar.daysInMonth(year: 2000, month: 2) == 29)
        #expect(CivilCalendar.daysInMonth(year: 1900, month: 2) == 28)
        #expect(CivilCalendar.daysInMonth(year: 2024, month: 2) == 29)
        #expect(CivilCalendar.iso8601(secondsSince1970: -1) == "1969-12-31T23:59:59Z")
    }

    /// The receipt parser's day count against the general one, every day of 0000–9999 at month
    /// boundaries and mid-month.
    @Test func validYearDayCount_equalsTheGeneralOne() {
        var mismatches: [String] = []
        for year in 0...9999 {
            for month in 1...12 {
                for day in [1, 15, CivilCalendar.daysInMonth(year: year, month: month)]
                where CivilCalendar.daysSince1970(validYear: year, month: month, day: day)
                    != CivilCalendar.daysSince1970(year: year, month: month, day: day)
                {
                    mismatches.append("\(year)-\(month)-\(day)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }
}
