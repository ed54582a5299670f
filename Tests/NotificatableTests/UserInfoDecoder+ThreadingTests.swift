import Dispatch
import Foundation
import Notificatable
import Testing

// One decoder or encoder shared by many threads gives the same results as on one thread. The `.affixed` key cache is
// shared between threads, and options may change while other threads decode.

private struct SharedKeyboard: Codable, Equatable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var centerEnd: CGPoint
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool
    var shownAt: Date?
}

/// Immutable test data shared with concurrent closures.
private struct Shared<Value>: @unchecked Sendable {
    let value: Value
}

/// Collects the failures seen by concurrent iterations.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    private var count = 0
    func record(_ message: String) { lock.withLock { messages.append(message) } }
    func tick() { lock.withLock { count += 1 } }
    var all: [String] { lock.withLock { messages } }
    var completed: Int { lock.withLock { count } }
}

private func keyboardUserInfo(_ index: Int) -> [AnyHashable: Any] {
    [
        "UIKeyboardFrameBeginUserInfoKey": NSValue(rect: CGRect(x: 0, y: Double(index), width: 390, height: 300)),
        "UIKeyboardFrameEndUserInfoKey": [[0, 500], [390, Double(index)]] as [[Double]],
        "UIKeyboardCenterEndUserInfoKey": "{195, \(index)}",
        "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
        "UIKeyboardAnimationCurveUserInfoKey": index,
        "UIKeyboardIsLocalUserInfoKey": NSNumber(value: index % 2 == 0),
        "UIKeyboardShownAtUserInfoKey": "2026-11-21T09:30:\(String(format: "%02d", index % 60))Z",
    ]
}

private func expectedKeyboard(_ index: Int) -> SharedKeyboard {
    SharedKeyboard(
        frameBegin: CGRect(x: 0, y: Double(index), width: 390, height: 300),
        frameEnd: CGRect(x: 0, y: 500, width: 390, height: Double(index)),
        centerEnd: CGPoint(x: 195, y: Double(index)), animationDuration: 0.25, animationCurve: index,
        isLocal: index % 2 == 0, shownAt: Date(timeIntervalSince1970: 1_795_253_400 + Double(index % 60))
    )
}

@Suite("Coders shared between threads")
struct CoderThreadingTests {
    @Test func oneDecoderSharedByManyThreads() {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        decoder.dateDecodingStrategy = .iso8601
        let inputs = Shared(value: (0..<64).map(keyboardUserInfo))
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 2_000) { iteration in
            let index = iteration % 64
            do {
                let decoded = try decoder.decode(SharedKeyboard.self, from: inputs.value[index])
                if decoded != expectedKeyboard(index) { failures.record("\(iteration): \(decoded)") }
                // An error path is built correctly on every thread too.
                var bad = inputs.value[index]
                bad["UIKeyboardAnimationCurveUserInfoKey"] = "x"
                do {
                    _ = try decoder.decode(SharedKeyboard.self, from: bad)
                    failures.record("\(iteration): no error")
                } catch let DecodingError.typeMismatch(_, context) {
                    if context.codingPath.map(\.stringValue) != ["animationCurve"] {
                        failures.record("\(iteration): \(context)")
                    }
                }
            } catch {
                failures.record("\(iteration): \(error)")
            }
            failures.tick()
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        #expect(failures.completed == 2_000)
    }

    @Test func freshAffixedStrategiesRaceOnTheirCaches() {
        // Every round starts with an empty cache, so threads fill it concurrently.
        let inputs = Shared(value: (0..<8).map(keyboardUserInfo))
        let failures = Failures()
        for _ in 0..<20 {
            let decoder = UserInfoDecoder()
            decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
            decoder.dateDecodingStrategy = .iso8601
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                do {
                    if try decoder.decode(SharedKeyboard.self, from: inputs.value[index]) != expectedKeyboard(index) {
                        failures.record("mismatch \(index)")
                    }
                } catch {
                    failures.record("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    }

    @Test func optionsChangedWhileOtherThreadsDecode() {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "A", suffix: "")
        let input = Shared(value: ["AValue": 1, "BValue": 2] as [AnyHashable: Any])
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 1_000) { iteration in
            if iteration % 10 == 0 {
                decoder.keyDecodingStrategy = .affixed(prefix: iteration % 20 == 0 ? "A" : "B", suffix: "")
                return
            }
            do {
                let value = try decoder.decode(Box<Int>.self, from: input.value).value
                if value != 1 && value != 2 { failures.record("\(value)") }
            } catch {
                failures.record("\(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    }

    @Test func oneEncoderSharedByManyThreads() {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        encoder.dateEncodingStrategy = .iso8601
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        decoder.dateDecodingStrategy = .iso8601
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 1_000) { iteration in
            let value = expectedKeyboard(iteration % 64)
            do {
                let encoded = try encoder.encode(value)
                if encoded["UIKeyboardAnimationCurveUserInfoKey"] as? Int != value.animationCurve {
                    failures.record("\(iteration): \(encoded)")
                }
                if try decoder.decode(SharedKeyboard.self, from: encoded) != value {
                    failures.record("\(iteration): round trip")
                }
            } catch {
                failures.record("\(iteration): \(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    }
}
