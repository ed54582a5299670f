import Foundation
import Notificatable

/// Joins notification centers in several processes, or on several machines, through a ``NotificationTransport``.
///
/// A relay sends every local post of the handles it forwards through its transport, and posts every message it
/// receives for those handles on its local center. There, typed subscribers and plain legacy observers see it as a
/// local typed post: the payload under `NotificatableUserInfoKey`, its plain keys next to it, and the sending
/// relay's ``id`` under ``senderUserInfoKey``.
///
/// ```swift
/// let relay = NotificationRelay(transport: transport, center: center)
/// relay.forward(orderShipped)          // a Notificatable<OrderShipped>, OrderShipped: Codable
/// relay.forward(cacheInvalidated)      // a Notificatable<Never>
/// orderShipped.post(OrderShipped(id: "A-17"), center: center)   // every other process hears it, typed
/// relay.stop()
/// ```
///
/// What a relay guarantees (see <doc:AcrossProcesses>):
/// - **At most once.** A message lost by the engine, or sent while a receiver was disconnected, is not sent again.
///   The relay reports what it can see of a loss: the transport's ``NotificationTransportEvent/Kind/reconnected``,
///   and a gap in a sender's sequence numbers as ``NotificationTransportEvent/Kind/messagesMissed``. A message
///   received again is dropped and counted (``NotificationTransportEvent/Kind/duplicatesDropped``); a sequence number
///   far from the sender's recent ones is posted and reported (``NotificationTransportEvent/Kind/sequenceJumped``),
///   and can neither stop the sender's later messages nor make the relay forget its recent ones.
/// - **Ordered per sender**, for posts made on one thread, as long as the transport keeps its order.
/// - **No echo and no ping-pong.** A relay ignores its own messages, and never forwards a notification that carries
///   ``senderUserInfoKey``, that is, one that a relay posted.
///
/// A post is encoded and handed to the transport on the posting thread, before `post` returns; the transport sends
/// it later. A message larger than the transport's ``NotificationTransportLimits/maximumMessageSize`` is not sent
/// and is reported as ``NotificationTransportEvent/Kind/messageTooLarge``. The payload is written with the handle's
/// plain-keys encoder if it has one (`Notificatable/postingPlainKeys(encoder:)`), otherwise with a default
/// `UserInfoEncoder`, and read on the far side with the handle's decoder: keep their strategies matching. The
/// notification's `object` does not travel: re-posts have none.
///
/// A received message that is not a valid message, is of another format version, or whose payload does not decode
/// into the handle's type is reported as a `NotificationDecodingFailure` (to `onFailure:`, or the global
/// `NotificationDecodingFailure/handler`) and the relay goes on with the next one.
///
/// Anyone who can publish on the engine can send a relay a message. With an ``authenticator``, a relay seals every
/// message it sends (its size check counts the seal) and opens every message it receives before reading anything in
/// it: one that does not open is reported as ``NotificationTransportEvent/Kind/unauthenticatedMessage`` and never
/// posted. Without one, it posts whatever well-formed message arrives. Either way anyone who can listen reads the
/// payloads: see who can read and who can post in <doc:AcrossProcesses>.
///
/// A relay remembers the recent sequence numbers (a window of 256 per name) of the ``maximumTrackedSenders`` remote
/// senders it heard most recently (1,024 unless told otherwise), so that its memory stays bounded however many
/// processes come and go.
///
/// The relay calls its transport, its handlers and the center outside its lock, one transport call at a time.
public final class NotificationRelay: @unchecked Sendable {
    /// The `userInfo` key under which a relay's re-post carries the ``id`` of the relay that sent it:
    /// `"Notificatable.relaySender"`. A relay never forwards a notification that has it.
    public static let senderUserInfoKey = "Notificatable.relaySender"

    /// ``senderUserInfoKey`` as a dictionary key, converted once (an immutable `String`, never mutated).
    nonisolated(unsafe) static let senderKey = AnyHashable(senderUserInfoKey)

    /// This relay's id, unique to this instance: a UUID string. It is the `sender` of every message it sends.
    public let id: String

    /// The center whose posts this relay sends, and on which it posts what it receives.
    public let center: NotificationCenter

    /// The transport that carries the messages.
    public let transport: any NotificationTransport

    /// What seals the messages this relay sends and opens those it receives, or `nil` for plain messages.
    public let authenticator: (any NotificationMessageAuthenticator)?

    /// How many remote senders this relay remembers the sequence numbers of, to drop their duplicates and report
    /// their gaps: the ones heard most recently. See
    /// ``init(transport:center:authenticator:maximumTrackedSenders:onEvent:onFailure:)``.
    public let maximumTrackedSenders: Int

    /// The number of remote senders a relay remembers unless told otherwise: 1,024.
    public static let defaultMaximumTrackedSenders = 1024

    private let limits: NotificationTransportLimits
    private let onEvent: @Sendable (NotificationTransportEvent) -> Void
    private let onFailure: NotificationDecodingFailure.Handler?
    private let sealing: RelayMessageSealing

    private let lock = NSLock()
    /// The forwarded handles, by name. Guarded by `lock`.
    private var forwardings: [Notification.Name: Forwarding] = [:]
    /// How many forwarded names use each channel. Guarded by `lock`.
    private var channelUseCounts: [String: Int] = [:]
    /// The transport calls waiting to be made, in order, and whether a thread is making them. Guarded by `lock`.
    private var pending: [TransportCall] = []
    private var isDraining = false
    /// The last sequence number received from each remote sender for each name, for the senders heard most
    /// recently. Guarded by `lock`.
    private var remoteSenders: RemoteSenderTable
    /// The next sequence number to send for each name. Kept when a name stops being forwarded, so that a receiver
    /// never sees a sender's numbers start again. Guarded by `lock`.
    private var nextSequences: [Notification.Name: Int] = [:]
    private var isStopped = false
    /// Whether the `stop` call has been made to the transport, and the `stop()` calls waiting for it. Guarded by
    /// `lock`.
    private var isTransportStopped = false
    private var stopWaiters: [DispatchSemaphore] = []

    /// Creates a relay on `center` and starts `transport`.
    ///
    /// ```swift
    /// let relay = NotificationRelay(
    ///     transport: transport,
    ///     center: .default,
    ///     onEvent: { event in logger.warning("relay: \(event)") },
    ///     onFailure: { failure in logger.error("relay: \(failure)") }
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - transport: The transport. The relay starts it now and stops it in ``stop()``; give each relay its own.
    ///   - center: The local center. Defaults to `NotificationCenter.default`.
    ///   - authenticator: Seals every message sent and opens every message received, so that a message without a
    ///     valid tag is refused and reported as ``NotificationTransportEvent/Kind/unauthenticatedMessage``, never
    ///     posted. Give every relay that talks to this one the same keys. Defaults to `nil`: plain messages, which
    ///     anyone who can publish on the engine can forge.
    ///   - maximumTrackedSenders: How many remote senders (other relays; a restarted process is a new one) to
    ///     remember the last sequence number of, per name, so that their duplicates are dropped and their gaps
    ///     reported. When a sender beyond these is heard, the one heard least recently is forgotten: heard again, its
    ///     next message counts as its first, so a duplicate of an earlier message would be posted again and a gap
    ///     across the forgetting would not be reported. Keep it above the number of processes that send at once.
    ///     Defaults to ``defaultMaximumTrackedSenders``; at least 1.
    ///   - onEvent: Called with every ``NotificationTransportEvent``: a post refused or not sent, a lost
    ///     connection, a reconnection, missed messages, dropped duplicates, a jump in a sender's numbers; each with
    ///     its ``NotificationTransportEvent/severity``. It runs on the thread that found out (a posting thread, or
    ///     the transport's), so keep it short. Defaults to the transport's
    ///     ``NotificationTransport/defaultRelayEventHandler`` (the PostgreSQL transports log through swift-log), or
    ///     else to writing the event to standard error in debug builds.
    ///   - onFailure: Called with every received message that could not be read or decoded. Defaults to the
    ///     global `NotificationDecodingFailure/handler`.
    public init(
        transport: any NotificationTransport,
        center: NotificationCenter = .default,
        authenticator: (any NotificationMessageAuthenticator)? = nil,
        maximumTrackedSenders: Int = NotificationRelay.defaultMaximumTrackedSenders,
        onEvent: (@Sendable (NotificationTransportEvent) -> Void)? = nil,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) {
        self.id = UUID().uuidString
        self.maximumTrackedSenders = max(1, maximumTrackedSenders)
        self.remoteSenders = RemoteSenderTable(capacity: maximumTrackedSenders)
        self.center = center
        self.transport = transport
        self.authenticator = authenticator
        self.limits = transport.limits
        let onEvent = onEvent ?? transport.defaultRelayEventHandler ?? Self.defaultEventHandler
        self.onEvent = onEvent
        self.onFailure = onFailure
        self.sealing = RelayMessageSealing(
            authenticator: authenticator, limit: limits.maximumMessageSize, report: onEvent)
        let handler = NotificationTransportHandler(
            receive: { [weak self] message, channel in
                TransportCallDepth.enter()
                defer { TransportCallDepth.leave() }
                self?.receive(message, on: channel)
            },
            report: { [weak self] event in
                TransportCallDepth.enter()
                defer { TransportCallDepth.leave() }
                self?.onEvent(event)
            }
        )
        transport.start(handler: handler)
    }

    deinit {
        stop()
    }

    /// The default `onEvent:` handler: writes the event to standard error in debug builds, nothing otherwise.
    public static let defaultEventHandler: @Sendable (NotificationTransportEvent) -> Void = { event in
        #if DEBUG
        FileHandle.standardError.write(Data("Notificatable relay: \(event)\n".utf8))
        #endif
    }

    // MARK: - Forwarding

    /// Sends every local post of `handle` through the transport, and posts every message received for it locally.
    ///
    /// ```swift
    /// let forwarding = relay.forward(orderShipped)
    /// forwarding.dispose()   // stop forwarding this handle only
    /// ```
    ///
    /// Forwarding a name that is already forwarded replaces the earlier handle (its disposable then does nothing); the
    /// transport keeps listening and the senders already heard stay known, so nothing is posted twice. After
    /// ``stop()``, this does nothing.
    ///
    /// - Parameter handle: The handle. Its payload must encode as a keyed container (a struct or class with
    ///   properties), because it travels as a `userInfo` dictionary.
    /// - Returns: A disposable that stops forwarding this handle.
    @discardableResult
    public func forward<Info: Codable>(_ handle: Notificatable<Info>) -> Disposable {
        if Info.self == Never.self {
            return add(Forwarding(name: handle.name, payloadType: Never.self, channel: channel(for: handle.name)))
        }
        let forwarding = Forwarding(
            name: handle.name,
            payloadType: Info.self,
            channel: channel(for: handle.name),
            coding: TypedCoding(handle: handle)
        )
        return add(forwarding)
    }

    /// Sends every local post of a handle without payload through the transport, and posts every message received
    /// for it locally.
    ///
    /// ```swift
    /// relay.forward(cacheInvalidated)   // a Notificatable<Never>
    /// ```
    ///
    /// - Parameter handle: The handle.
    /// - Returns: A disposable that stops forwarding this handle.
    @discardableResult
    public func forward(_ handle: Notificatable<Never>) -> Disposable {
        add(Forwarding(name: handle.name, payloadType: Never.self, channel: channel(for: handle.name)))
    }

    /// Stops the relay: removes every observer it added, hands the transport the messages of the posts made before
    /// `stop()` began, stops listening, and stops the transport. When it returns, the transport has been stopped and
    /// the relay calls it no more, even if another thread was making the relay's transport calls: `stop()` waits for
    /// that thread to finish them. Calling it again, from any thread, waits the same way and does nothing else.
    ///
    /// Called from inside a transport call or a transport callback (a subscriber of a received message, an `onEvent:`
    /// or `onFailure:` handler that the transport's thread or a `publish` reached), `stop()` does not wait: the thread
    /// making the current transport call may be waiting for this very thread (a transport's event loop, say), so
    /// waiting could deadlock. It returns at once, and the thread making the relay's transport calls makes the ones
    /// left and stops the transport as soon as its current call returns (when that is this thread, right after the
    /// callback returns). A post made on another thread while `stop()` runs may or may not be sent. A relay that is
    /// released stops itself the same way.
    public func stop() {
        lock.lock()
        guard !isStopped else {
            let waiter = stopWaiterIfNeeded()
            lock.unlock()
            waiter?.wait()
            return
        }
        isStopped = true
        let duplicates = takeDuplicateEvents()
        let removed = Array(forwardings.values)
        forwardings = [:]
        for channel in channelUseCounts.keys { pending.append(.unlisten(channel)) }
        channelUseCounts = [:]
        remoteSenders.removeAll()
        pending.append(.stop)
        let shouldDrain = !isDraining
        isDraining = true
        let waiter = shouldDrain ? nil : stopWaiterIfNeeded()
        let observers = removed.compactMap { $0.takeObserver() }
        lock.unlock()
        for observer in observers { center.removeObserver(observer) }
        for event in duplicates { onEvent(event) }
        if shouldDrain {
            drain()
        } else {
            waiter?.wait()
        }
    }

    /// A semaphore that the thread making the transport calls signals once it has stopped the transport, for a
    /// `stop()` that must wait for that; `nil` when the transport is stopped already, or when this thread is inside a
    /// transport call or callback (see ``stop()``). Called with `lock` held.
    private func stopWaiterIfNeeded() -> DispatchSemaphore? {
        guard !isTransportStopped, !TransportCallDepth.isInsideTransport else { return nil }
        let waiter = DispatchSemaphore(value: 0)
        stopWaiters.append(waiter)
        return waiter
    }

    /// The forwarding's channel for `name`.
    private func channel(for name: Notification.Name) -> String {
        NotificationChannelName.channel(for: name, maximumLength: limits.maximumChannelLength)
    }

    private func add(_ forwarding: Forwarding) -> Disposable {
        // The observer holds the forwarding (and so the handle) until it is removed; the forwarding lets go of the
        // observer's token when it is removed, which ends the cycle.
        let observer = center.addObserver(forName: forwarding.name, object: nil, queue: nil) {
            [weak self] notification in
            self?.send(notification, via: forwarding)
        }
        lock.lock()
        guard !isStopped else {
            lock.unlock()
            center.removeObserver(observer)
            return Disposable {}
        }
        forwarding.setObserver(observer)
        let replaced = forwardings.updateValue(forwarding, forKey: forwarding.name)
        let replacedObserver = replaced?.takeObserver()
        // A replacement has the same name, so the same channel: the transport keeps listening (a durable one keeps
        // its place) and the senders' windows stay, so nothing received before is posted again.
        if replaced == nil {
            channelUseCounts[forwarding.channel, default: 0] += 1
            if channelUseCounts[forwarding.channel] == 1 { pending.append(.listen(forwarding.channel)) }
        }
        let shouldDrain = startDrainingIfIdle()
        lock.unlock()
        if let replacedObserver { center.removeObserver(replacedObserver) }
        if shouldDrain { drain() }
        return Disposable { [weak self, weak forwarding] in
            guard let self, let forwarding else { return }
            self.remove(forwarding)
        }
    }

    private func remove(_ forwarding: Forwarding) {
        lock.lock()
        guard forwardings[forwarding.name] === forwarding else {
            lock.unlock()
            return
        }
        let duplicates = takeDuplicateEvents()
        forwardings[forwarding.name] = nil
        releaseChannel(forwarding.channel)
        remoteSenders.forget(forwarding.name)
        let observer = forwarding.takeObserver()
        let shouldDrain = startDrainingIfIdle()
        lock.unlock()
        if let observer { center.removeObserver(observer) }
        for event in duplicates { onEvent(event) }
        if shouldDrain { drain() }
    }

    /// Drops one use of `channel`, and queues an `unlisten` when it was the last. Called with `lock` held.
    private func releaseChannel(_ channel: String) {
        let count = (channelUseCounts[channel] ?? 1) - 1
        if count > 0 {
            channelUseCounts[channel] = count
        } else {
            channelUseCounts[channel] = nil
            pending.append(.unlisten(channel))
        }
    }

    // MARK: - Sending

    private func send(_ notification: Notification, via forwarding: Forwarding) {
        // A re-post of this relay (the marker), or of another relay (the key): not sent on.
        if RepostMarker.isCurrent(notification.userInfo) || notification.userInfo?[Self.senderKey] != nil { return }
        let body: NotificationRelayMessage.UnsequencedBody
        do {
            let payload = try forwarding.payload(of: notification)
            let headers = transport.headers(forPostOf: forwarding.name, on: forwarding.channel)
            body = try NotificationRelayMessage.unsequencedBody(
                name: forwarding.name, sender: id, payload: payload, headers: headers)
        } catch {
            onEvent(.init(kind: .encodingFailed, name: forwarding.name, channel: forwarding.channel, error: error))
            return
        }
        lock.lock()
        guard !isStopped, forwardings[forwarding.name] === forwarding else {
            lock.unlock()
            return
        }
        let sequence = nextSequences[forwarding.name] ?? 1
        let size = body.size(withSequence: sequence) + sealing.overhead
        if let limit = limits.maximumMessageSize, size > limit {
            lock.unlock()
            onEvent(
                .init(
                    kind: .messageTooLarge,
                    name: forwarding.name,
                    channel: forwarding.channel,
                    error: NotificationRelayError.messageTooLarge(size: size, limit: limit)
                )
            )
            return
        }
        nextSequences[forwarding.name] = sequence + 1
        pending.append(.publish(body.message(withSequence: sequence), forwarding.channel))
        let shouldDrain = startDrainingIfIdle()
        lock.unlock()
        if shouldDrain { drain() }
    }

    /// Marks this thread as the one making the transport calls if none is. Called with `lock` held.
    private func startDrainingIfIdle() -> Bool {
        guard !isDraining, !pending.isEmpty else { return false }
        isDraining = true
        return true
    }

    /// Makes the pending transport calls in order, outside the lock, until there are none left. Only the thread that
    /// set `isDraining` calls it, so the transport is called from one thread at a time; calls queued meanwhile, even
    /// from inside the transport, are made by this loop. After the `stop` call it wakes the `stop()` calls waiting.
    private func drain() {
        TransportCallDepth.enter()
        defer { TransportCallDepth.leave() }
        while true {
            lock.lock()
            let calls = pending
            pending = []
            if calls.isEmpty { isDraining = false }
            lock.unlock()
            if calls.isEmpty { return }
            for call in calls {
                switch call {
                case .publish(let message, let channel):
                    if let sealed = sealing.seal(message, on: channel) { transport.publish(sealed, on: channel) }
                case .listen(let channel): transport.listen(to: channel)
                case .unlisten(let channel): transport.unlisten(from: channel)
                case .stop:
                    transport.stop()
                    let waiters = lock.withLock {
                        isTransportStopped = true
                        defer { stopWaiters = [] }
                        return stopWaiters
                    }
                    for waiter in waiters { waiter.signal() }
                }
            }
        }
    }

    // MARK: - Receiving

    /// The `duplicatesDropped` events for the duplicates counted since the last call. Called with `lock` held.
    private func takeDuplicateEvents() -> [NotificationTransportEvent] {
        guard remoteSenders.hasDuplicateCounts else { return [] }
        return remoteSenders.takeDuplicateCounts().map { counted in
            NotificationTransportEvent(
                kind: .duplicatesDropped,
                name: counted.name,
                channel: forwardings[counted.name]?.channel
                    ?? NotificationChannelName.channel(for: counted.name, maximumLength: limits.maximumChannelLength),
                error: NotificationRelayError.duplicatesDropped(sender: counted.sender, count: counted.count)
            )
        }
    }

    private func receive(_ data: Data, on channel: String) {
        guard let data = sealing.open(data, on: channel) else { return }
        let message: NotificationRelayMessage
        do {
            message = try NotificationRelayMessage(decoding: data)
        } catch {
            let name = NotificationRelayMessage.name(in: data) ?? Notification.Name(channel)
            lock.lock()
            let payloadType = forwardings[name]?.payloadType ?? NotificationRelayMessage.self
            lock.unlock()
            NotificationDecodingFailure(
                kind: error.isUnsupportedVersion ? .unsupportedMessageVersion : .malformedMessage,
                name: name,
                payloadType: payloadType,
                error: error,
                object: nil
            ).report(to: onFailure)
            return
        }
        if message.sender == id { return }
        lock.lock()
        guard !isStopped, let forwarding = forwardings[message.name] else {
            lock.unlock()
            return
        }
        let verdict = remoteSenders.receive(message.sequence, from: message.sender, name: message.name)
        let duplicates = verdict == .duplicate ? [] : takeDuplicateEvents()
        lock.unlock()
        for event in duplicates { onEvent(event) }
        switch verdict {
        case .duplicate:
            // Dropped (at most once), and counted: reported with the next new message, or when the relay stops.
            return
        case .accepted(let missed) where missed > 0:
            let error = NotificationRelayError.messagesMissed(sender: message.sender, count: missed)
            onEvent(.init(kind: .messagesMissed, name: message.name, channel: channel, error: error))
        case .accepted:
            break
        case .jumped(let from):
            let error = NotificationRelayError.sequenceJumped(sender: message.sender, from: from, to: message.sequence)
            onEvent(.init(kind: .sequenceJumped, name: message.name, channel: channel, error: error))
        }
        let notification: Notification
        do {
            notification = try forwarding.notification(message.payloadUserInfo, from: message.sender)
        } catch {
            error.report(to: onFailure)
            return
        }
        RepostMarker.posting(notification.userInfo) { center.post(notification) }
    }
}

// MARK: - Internals

extension NotificationRelay {
    /// One call to the transport, queued so that calls are made in order and outside the lock.
    private enum TransportCall {
        case publish(Data, String)
        case listen(String)
        case unlisten(String)
        case stop
    }

    /// One forwarded handle, with its payload type erased.
    private final class Forwarding: @unchecked Sendable {
        let name: Notification.Name
        let payloadType: any Any.Type
        let channel: String
        /// Encodes and decodes the payload; `nil` for a handle without payload.
        let coding: (any ForwardingCoding)?
        /// The observer token on the center. Guarded by the relay's lock.
        private var observer: (any NSObjectProtocol)?

        init(
            name: Notification.Name,
            payloadType: any Any.Type,
            channel: String,
            coding: (any ForwardingCoding)? = nil
        ) {
            self.name = name
            self.payloadType = payloadType
            self.channel = channel
            self.coding = coding
        }

        /// The plain keys of a local post's payload; `nil` for a handle without payload.
        func payload(of notification: Notification) throws -> [AnyHashable: Any]? {
            try coding?.payload(of: notification)
        }

        /// The local re-post of a received message.
        func notification(_ payload: [AnyHashable: Any]?, from sender: String) throws(NotificationDecodingFailure)
            -> Notification
        {
            guard let coding else {
                return Notification(name: name, object: nil, userInfo: [NotificationRelay.senderUserInfoKey: sender])
            }
            return try coding.notification(payload, from: sender)
        }

        func setObserver(_ observer: any NSObjectProtocol) { self.observer = observer }

        func takeObserver() -> (any NSObjectProtocol)? {
            defer { observer = nil }
            return observer
        }
    }
}

extension Error {
    /// Whether this is the error that ``NotificationRelayMessage/init(decoding:)`` throws for another version.
    fileprivate var isUnsupportedVersion: Bool {
        guard case .dataCorrupted(let context) = self as? DecodingError else { return false }
        return context.codingPath.count == 1
            && context.codingPath[0].stringValue == NotificationRelayMessage.Field.version
    }
}

extension NotificationRelay {
    /// How many remote senders the relay remembers now (for tests).
    var trackedSenderCount: Int { lock.withLock { remoteSenders.count } }
}
