import Foundation
import Notificatable
import NotificatableRelay

// MARK: - Issue 43: one durable outbox post's message, without a server
//
// `DurableOutboxPost.message` (Integrations/NotificatablePostgres) makes each post's bytes with a fresh random sender
// (`NotificationRelayMessage.randomSender()`, `UUID().uuidString` before), sequence 1 and no headers:
// `NotificationRelayMessage.encoded(_:for:sender:sequence:)`. The baseline is what a
// generic queue client pays to serialise the same struct: one reused `JSONEncoder`. The breakdown rows have no
// baseline: the fixed-sender row is the message without the UUID, and the encode row the payload's plain keys alone,
// so the wire writing is the fixed-sender row minus the encode row.

enum OutboxMessageWorkloads {
    static let handle = RelayWorkloads.handle

    /// One outbox post's message, exactly as `DurableOutboxPost.message` makes it when tracing is off.
    static var message: Workload {
        Workload(label: "outbox message") {
            var index = 0
            return { n in
                try repeatOps(n) {
                    index += 1
                    let bytes = try NotificationRelayMessage.encoded(
                        RelayBenchPayload(index: index), for: handle, sender: NotificationRelayMessage.randomSender(),
                        sequence: 1)
                    return UInt64(bytes.count)
                }
            }
        }
    }

    /// The same message with one fixed sender: the message without the UUID.
    static var messageFixedSender: Workload {
        Workload(label: "outbox message, fixed sender") {
            let sender = UUID().uuidString
            var index = 0
            return { n in
                try repeatOps(n) {
                    index += 1
                    let bytes = try NotificationRelayMessage.encoded(
                        RelayBenchPayload(index: index), for: handle, sender: sender, sequence: 1)
                    return UInt64(bytes.count)
                }
            }
        }
    }

    /// A fresh sender id alone.
    static var randomSender: Workload {
        Workload(label: "randomSender()") {
            { n in repeatOps(n) { UInt64(NotificationRelayMessage.randomSender().utf8.count) } }
        }
    }

    /// A fresh sender id as Foundation makes it, as the outbox did before issue 43.
    static var uuidString: Workload {
        Workload(label: "UUID().uuidString") {
            { n in repeatOps(n) { UInt64(UUID().uuidString.utf8.count) } }
        }
    }

    /// The payload's plain keys alone, as the relay's encoder for this handle writes them.
    static var plainKeys: Workload {
        Workload(label: "UserInfoEncoder()") {
            let encoder = UserInfoEncoder()
            var index = 0
            return { n in
                try repeatOps(n) {
                    index += 1
                    return UInt64(try encoder.encode(RelayBenchPayload(index: index)).count)
                }
            }
        }
    }

    /// The generic encoder a queue client uses, reused from post to post.
    static var jsonEncoder: Workload {
        Workload(label: "JSONEncoder().encode") {
            let encoder = JSONEncoder()
            var index = 0
            return { n in
                try repeatOps(n) {
                    index += 1
                    return UInt64(try encoder.encode(RelayBenchPayload(index: index)).count)
                }
            }
        }
    }
}

enum OutboxMessageChecks {
    /// The message reads back with its payload, sender and sequence.
    static func message() throws -> String? {
        let sender = UUID().uuidString
        let bytes = try NotificationRelayMessage.encoded(
            RelayBenchPayload(index: 7), for: OutboxMessageWorkloads.handle, sender: sender, sequence: 1)
        let message = try NotificationRelayMessage(decoding: bytes)
        let payload = try UserInfoDecoder().decode(RelayBenchPayload.self, from: message.payloadUserInfo ?? [:])
        guard message.sender == sender, message.sequence == 1, payload == RelayBenchPayload(index: 7) else {
            return "read back \(message.sender) \(message.sequence) \(payload)"
        }
        return nil
    }
}

/// Issue 43's rows. Every ratio is candidate ÷ baseline.
func outboxMessageComparisons() -> [Comparison] {
    let group = "outbox message per post (issue 43)"
    return [
        Comparison(
            id: "outbox-message", row: "outbox message: fresh sender, sequence 1", group: group,
            candidate: OutboxMessageWorkloads.message, baseline: OutboxMessageWorkloads.jsonEncoder,
            target: .atMost(1), check: OutboxMessageChecks.message
        ),
        Comparison(
            id: "outbox-message-fixed-sender", row: "  the same, one fixed sender", group: group,
            candidate: OutboxMessageWorkloads.messageFixedSender, baseline: OutboxMessageWorkloads.jsonEncoder
        ),
        Comparison(
            id: "outbox-sender", row: "  of which the sender: randomSender()", group: group,
            candidate: OutboxMessageWorkloads.randomSender, baseline: OutboxMessageWorkloads.uuidString
        ),
        Comparison(
            id: "outbox-plain-keys", row: "  of which the payload's plain keys", group: group,
            candidate: OutboxMessageWorkloads.plainKeys
        ),
    ]
}
