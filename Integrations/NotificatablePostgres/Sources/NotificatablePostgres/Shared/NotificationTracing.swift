import Foundation
import NotificatableRelay
import Tracing

/// Distributed tracing through swift-distributed-tracing, after OpenTelemetry's messaging conventions: a post starts
/// a producer span `publish <channel>` (a child of the poster's `ServiceContext`) and injects its context into the
/// message's `headers` with the tracer's own propagation (a W3C `traceparent` with swift-otel's default
/// propagators); a processor runs each handler call in a consumer span `process <channel>` whose parent is that
/// context. Both carry `messaging.system` = `postgresql` and `messaging.destination.name` = the channel; the
/// consumer span also `messaging.message.id` (the delivery id) and `messaging.consumer.group.name` (the consumer
/// name). With no tracer (``NoOpTracer``, what `InstrumentationSystem` holds until it is bootstrapped) nothing is
/// started, injected or written: a message has no `headers` field.
struct NotificationTracing: Sendable {
    /// The tracer given to the transport, or `nil` for the one bootstrapped, read at each use (so a bootstrap after
    /// the transport was made counts).
    let configured: (any Tracer)?

    var tracer: any Tracer { configured ?? InstrumentationSystem.tracer }

    /// The headers of a post on `channel`, made in the poster's task: the context of a `publish` span, a child of
    /// `ServiceContext.current`. Empty with no tracer, or when the tracer's keys would not fit a message.
    func publishHeaders(channel: String) -> [String: String] {
        let tracer = self.tracer
        if tracer is NoOpTracer { return [:] }
        return Self.publishHeaders(tracer, channel: channel)
    }

    private static func publishHeaders(_ tracer: some Tracer, channel: String) -> [String: String] {
        let span = tracer.startSpan(
            "publish \(channel)", context: ServiceContext.current ?? .topLevel, ofKind: .producer)
        span.attributes["messaging.system"] = "postgresql"
        span.attributes["messaging.destination.name"] = channel
        span.attributes["messaging.operation.type"] = "send"
        var headers: [String: String] = [:]
        tracer.inject(span.context, into: &headers, using: HeadersInjector())
        span.end()
        return NotificationRelayMessageLimits.fit(headers)
    }

    /// Runs `body` in a consumer span `process <channel>` whose parent is the context in `headers` (none: a new
    /// trace); just `body` with no tracer. A thrown error is recorded on the span and rethrown.
    func process(
        headers: [String: String], channel: String, consumer: String, id: String,
        _ body: () async throws -> Void
    ) async throws {
        let tracer = self.tracer
        if tracer is NoOpTracer { return try await body() }
        try await Self.process(tracer, headers: headers, channel: channel, consumer: consumer, id: id, body)
    }

    private static func process(
        _ tracer: some Tracer, headers: [String: String], channel: String, consumer: String, id: String,
        _ body: () async throws -> Void
    ) async throws {
        var context = ServiceContext.topLevel
        tracer.extract(headers, into: &context, using: HeadersExtractor())
        try await tracer.withSpan("process \(channel)", context: context, ofKind: .consumer) { span in
            span.attributes["messaging.system"] = "postgresql"
            span.attributes["messaging.destination.name"] = channel
            span.attributes["messaging.operation.type"] = "process"
            span.attributes["messaging.message.id"] = id
            span.attributes["messaging.consumer.group.name"] = consumer
            try await body()
        }
    }
}

extension NotificationTracing {
    /// Runs `body`, a batch's one handler call, in one consumer span `process <channel>`: a batch has no single
    /// parent, so the span starts a trace of its own (as OpenTelemetry's messaging conventions say of a batch) and
    /// links the context of each message that carries one; `messaging.batch.message_count` is the batch's size. Just
    /// `body` with no tracer.
    func processBatch(
        headers: [[String: String]], channel: String, consumer: String, _ body: () async throws -> Void
    ) async throws {
        let tracer = self.tracer
        if tracer is NoOpTracer { return try await body() }
        try await Self.processBatch(tracer, headers: headers, channel: channel, consumer: consumer, body)
    }

    private static func processBatch(
        _ tracer: some Tracer, headers: [[String: String]], channel: String, consumer: String,
        _ body: () async throws -> Void
    ) async throws {
        try await tracer.withSpan("process \(channel)", context: .topLevel, ofKind: .consumer) { span in
            span.attributes["messaging.system"] = "postgresql"
            span.attributes["messaging.destination.name"] = channel
            span.attributes["messaging.operation.type"] = "process"
            span.attributes["messaging.consumer.group.name"] = consumer
            span.attributes["messaging.batch.message_count"] = headers.count
            for carrier in headers where !carrier.isEmpty {
                var context = ServiceContext.topLevel
                tracer.extract(carrier, into: &context, using: HeadersExtractor())
                span.addLink(SpanLink(context: context, attributes: [:]))
            }
            try await body()
        }
    }
}

/// Headers that fit a message's limits, or none: a trace context too large to travel is dropped, never the post.
enum NotificationRelayMessageLimits {
    static func fit(_ headers: [String: String]) -> [String: String] {
        guard headers.count <= NotificationRelayMessage.maximumHeaderCount else { return [:] }
        let length = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        return length <= NotificationRelayMessage.maximumHeadersLength ? headers : [:]
    }
}

struct HeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

struct HeadersExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}
