import Internals
import Testing

/// A configured timeout becomes a duration without trapping, whatever its value.
@Suite struct DeadlineTests {
    @Test func clampedSeconds() {
        #expect(Deadline.clampedSeconds(.nan) == 0.001)
        #expect(Deadline.clampedSeconds(-.infinity) == 0.001)
        #expect(Deadline.clampedSeconds(-5) == 0.001)
        #expect(Deadline.clampedSeconds(0) == 0.001)
        #expect(Deadline.clampedSeconds(2.5) == 2.5)
        #expect(Deadline.clampedSeconds(.infinity) == Deadline.longestSeconds)
        #expect(Deadline.clampedSeconds(1e300) == Deadline.longestSeconds)
        #expect(Deadline.duration(seconds: 2.5) == .milliseconds(2500))
        #expect(Deadline.duration(seconds: .infinity) == .seconds(86_400 * 365))
        #expect(Deadline.duration(seconds: .nan) == .milliseconds(1))
    }
}
