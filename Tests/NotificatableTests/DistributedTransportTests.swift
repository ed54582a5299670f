// The macOS transport, run: on a Mac against the real DistributedNotificationCenter, on Linux by the Apple-branch
// check (scripts/apple-check.sh) against its in-process stand-in in AppleSDKShims.swift.
#if os(macOS) || NOTIFICATABLE_APPLE_CHECK
import Foundation
import Notificatable
import NotificatableRelay
import Testing

@Suite("DistributedNotificationTransport")
struct DistributedTransportTests {
    @Test func twoRelaysExchangeTypedAndNeverPostsWithoutEcho() throws {
        // One prefix per run, so no other process's relay shares these channels.
        let prefix = "Notificatable.tests.\(UUID().uuidString)."
        let leftCenter = NotificationCenter()
        let rightCenter = NotificationCenter()
        let left = NotificationRelay(
            transport: DistributedNotificationTransport(channelPrefix: prefix), center: leftCenter)
        let right = NotificationRelay(
            transport: DistributedNotificationTransport(channelPrefix: prefix), center: rightCenter)
        defer {
            left.stop()
            right.stop()
        }
        let shipped = Notificatable<RelayOrder>.name(uniqueName())
        let expired = Notificatable.withoutPayload(uniqueName())
        for relay in [left, right] {
            relay.forward(shipped)
            relay.forward(expired)
        }
        let onLeft = ValueRecorder<RelayOrder>()
        let onRight = ValueRecorder<RelayOrder>()
        let expiredOnRight = ValueRecorder<Bool>()
        let bag = DisposeBag()
        defer { bag.dispose() }
        shipped.subscribe(center: leftCenter) { onLeft.append($0.userInfo) }.store(in: bag)
        shipped.subscribe(center: rightCenter) { onRight.append($0.userInfo) }.store(in: bag)
        expired.subscribe(center: rightCenter) { _ in expiredOnRight.append(true) }.store(in: bag)

        let order = RelayOrder(id: "D-1", count: 2, shippedAt: Date(timeIntervalSince1970: 1_764_000_000))
        shipped.post(order, center: leftCenter)
        expired.post(center: leftCenter)

        // On a Mac the system delivers on the main run loop; wait for it there, without a timed assertion.
        let deadline = Date().addingTimeInterval(10)
        while (onRight.values.isEmpty || expiredOnRight.values.isEmpty) && Date() < deadline {
            RunLoop.current.run(until: Date().addingTimeInterval(0.01))
        }
        #expect(onRight.values == [order])
        #expect(onLeft.values == [order])  // the local subscriber, once: no echo back through the transport
        #expect(expiredOnRight.values == [true])
    }
}
#endif
