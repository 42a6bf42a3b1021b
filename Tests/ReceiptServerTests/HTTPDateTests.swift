import Testing

@testable import HTTPServer

/// The IMF-fixdate of the server's `Date` header, on the civil-date arithmetic of Internals.
@Suite struct HTTPDateTests {
    @Test func formatsTheRFC9110Example() {
        #expect(HTTPDate.format(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func formatsLeapDaysAndTimesBefore1970() {
        #expect(HTTPDate.format(secondsSince1970: 951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.format(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(secondsSince1970: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
    }
}
