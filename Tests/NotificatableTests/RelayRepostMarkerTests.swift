import Foundation
import Notificatable
import Testing

@testable import NotificatableRelay

/// The relay's own observer tells its re-post of a received message from a local post by the identity of the
/// re-post's `userInfo` (`RepostMarker`), before it looks the sender key up.
@Suite struct RelayRepostMarkerTests {
    /// The marked `userInfo` is recognised where the center hands the notification to an observer (the same
    /// storage arrives), and nothing else is: another post from inside, and anything after the post.
    @Test func theMarkedRepostIsRecognisedInsideItsPostOnly() {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let seen = ValueRecorder<String>()
        let observer = center.addObserver(forName: name, object: nil, queue: nil) { note in
            let tag = note.userInfo?["tag"] as? String ?? "?"
            seen.append("\(tag) \(RepostMarker.isCurrent(note.userInfo))")
            if tag == "repost" { center.post(name: name, object: nil, userInfo: ["tag": "nested"]) }
        }
        defer { center.removeObserver(observer) }
        let userInfo: [AnyHashable: Any] = ["tag": "repost", "other": 1]
        RepostMarker.posting(userInfo) {
            center.post(Notification(name: name, object: nil, userInfo: userInfo))
        }
        center.post(Notification(name: name, object: nil, userInfo: userInfo))
        #expect(seen.values == ["repost true", "nested false", "repost false", "nested false"])
    }

    /// A subscriber that posts the same handle locally while the relay re-posts a received message: its post is
    /// sent on, the re-post is not sent back.
    @Test func aLocalPostFromInsideARepostIsSentTheRepostIsNot() throws {
        let handle = Notificatable<RelayTick>.name(uniqueName())
        let transport = ScriptedRelayTransport()
        let center = NotificationCenter()
        let relay = NotificationRelay(transport: transport, center: center)
        defer { relay.stop() }
        let subscription = handle.subscribe(center: center) { note in
            if note.userInfo.sender == "remote" {
                handle.post(RelayTick(sender: "local", sequence: note.userInfo.sequence), center: center)
            }
        }
        defer { subscription.dispose() }
        relay.forward(handle)
        for sequence in 1...3 { try transport.deliver(handle, "remote", sequence) }
        let sent = try transport.published.values.map { try NotificationRelayMessage(decoding: $0) }
        #expect(sent.map { $0.payload?["sender"] as? String } == ["local", "local", "local"])
        #expect(sent.map { $0.payload?["sequence"] as? Int } == [1, 2, 3])
    }
}
