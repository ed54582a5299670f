import Foundation

// MARK: - The sequence

/// An asynchronous sequence of the notifications of one handle: what ``Notificatable/payloads(object:center:bufferingPolicy:onFailure:)``
/// and ``Notificatable/notifications(object:center:bufferingPolicy:)`` return.
///
/// ```swift
/// for await user in userDidLogin.payloads(center: center) {
///     show(user)
/// }
/// ```
///
/// **Each iterator is its own observer.** Creating the sequence observes nothing; `makeAsyncIterator()`, which a
/// `for await` loop calls when it starts, subscribes, and posts from then on are buffered for that iterator. Two
/// loops over one sequence each receive every post. To be sure that a post made right after setting up the loop is
/// seen, create the iterator first: `var updates = handle.payloads().makeAsyncIterator()`.
///
/// **Ending.** The observer is removed, and the loop ends, when:
/// - the task that consumes the sequence is cancelled;
/// - the iterator is dropped (for example, the loop is left with `break` or `return`);
/// - the subscription ends by itself, because the filter object is gone (noticed at the next post of the name).
///
/// This differs from ``Disposable``: a `Disposable` that you drop keeps observing, while an iterator that you drop
/// stops.
///
/// **Failures.** A notification that cannot be turned into the payload type is reported to `onFailure`, or to
/// ``NotificationDecodingFailure/handler``, and skipped. It never ends the sequence.
///
/// **Buffering.** Payloads wait in a buffer until the loop asks for them; see ``BufferingPolicy``. The default,
/// ``NotificationBufferingPolicy/unbounded``, keeps every payload.
public struct NotificationSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// The sequence never throws: a notification that cannot be converted is reported and skipped.
    public typealias Failure = Never

    /// How many payloads wait for a slow consumer; see ``NotificationBufferingPolicy``.
    public typealias BufferingPolicy = NotificationBufferingPolicy

    /// The policy each iterator's buffer follows.
    public let bufferingPolicy: BufferingPolicy

    /// Subscribes `yield`; the returned disposable ends that subscription.
    private let observe: @Sendable (_ yield: @escaping @Sendable (Element) -> Void) -> Disposable

    init(
        bufferingPolicy: BufferingPolicy,
        observe: @escaping @Sendable (_ yield: @escaping @Sendable (Element) -> Void) -> Disposable
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.observe = observe
    }

    /// Subscribes, and returns an iterator over the payloads posted from now on.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self,
            bufferingPolicy: bufferingPolicy.streamPolicy(for: Element.self)
        )
        // The handler holds the finisher; when the subscription ends for any reason, the handler is released and
        // the finisher ends the stream, so that the loop never waits for a post that can no longer come.
        let finisher = StreamFinisher(continuation)
        let subscription = observe { element in
            finisher.continuation.yield(element)
        }
        // Called when the consuming task is cancelled, when the iterator is dropped, or when the stream finishes.
        continuation.onTermination = { _ in
            subscription.dispose()
        }
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// Iterates over the payloads of one subscription. Dropping it ends the subscription.
    public struct Iterator: AsyncIteratorProtocol {
        /// The iterator never throws; it returns `nil` when the sequence ends.
        public typealias Failure = Never

        var base: AsyncStream<Element>.Iterator

        /// The next payload, or `nil` once the consuming task is cancelled or the subscription ended.
        public mutating func next() async -> Element? {
            await base.next()
        }

        /// The next payload, or `nil` once the consuming task is cancelled or the subscription ended.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await base.next(isolation: actor)
        }
    }
}

/// How many payloads wait for a slow consumer, and which ones are dropped when the buffer is full.
///
/// ```swift
/// // A consumer that only cares about the latest value:
/// for await size in windowDidResize.payloads(bufferingPolicy: .bufferingNewest(1)) { layout(size) }
/// ```
public struct NotificationBufferingPolicy: Sendable, Equatable {
    enum Storage: Sendable, Equatable {
        case unbounded
        case newest(Int)
        case oldest(Int)
    }

    let storage: Storage

    /// Keeps every payload until it is consumed. The default.
    public static let unbounded = NotificationBufferingPolicy(storage: .unbounded)

    /// Keeps at most `limit` payloads, dropping the oldest when a new one arrives on a full buffer.
    ///
    /// A `limit` below 1 keeps nothing: only a consumer that is already waiting receives a post.
    public static func bufferingNewest(_ limit: Int) -> NotificationBufferingPolicy {
        NotificationBufferingPolicy(storage: .newest(Swift.max(0, limit)))
    }

    /// Keeps at most `limit` payloads, dropping new ones while the buffer is full.
    ///
    /// A `limit` below 1 keeps nothing: only a consumer that is already waiting receives a post.
    public static func bufferingOldest(_ limit: Int) -> NotificationBufferingPolicy {
        NotificationBufferingPolicy(storage: .oldest(Swift.max(0, limit)))
    }

    func streamPolicy<Element>(for _: Element.Type) -> AsyncStream<Element>.Continuation.BufferingPolicy {
        switch storage {
        case .unbounded: .unbounded
        case .newest(let limit): .bufferingNewest(limit)
        case .oldest(let limit): .bufferingOldest(limit)
        }
    }
}

/// Finishes a stream when the last reference to it goes, that is, when a subscription drops its handler.
final class StreamFinisher<Element: Sendable>: Sendable {
    let continuation: AsyncStream<Element>.Continuation

    init(_ continuation: AsyncStream<Element>.Continuation) {
        self.continuation = continuation
    }

    deinit {
        continuation.finish()
    }
}

/// The optional object filter of a sequence, held weakly between making the sequence and making each iterator.
final class SequenceFilter: @unchecked Sendable {
    private let isFiltered: Bool
    private weak var object: AnyObject?

    init(_ object: AnyObject?) {
        isFiltered = object != nil
        self.object = object
    }

    /// The options of an iterator's subscription, or `nil` if the filter object is gone, so that nothing can match.
    func options(center: NotificationCenter, onFailure: NotificationDecodingFailure.Handler? = nil) -> SubscribeOptions?
    {
        guard isFiltered else { return SubscribeOptions(center: center, onFailure: onFailure) }
        guard let object else { return nil }
        return SubscribeOptions(object: object, center: center, onFailure: onFailure)
    }
}

// MARK: - Making sequences

extension Notificatable where Info: Sendable {
    /// The payloads of this notification, as an asynchronous sequence.
    ///
    /// ```swift
    /// let task = Task {
    ///     for await user in userDidLogin.payloads(center: center) {
    ///         show(user)
    ///     }
    /// }
    /// // …
    /// task.cancel()   // removes the observer and ends the loop
    /// ```
    ///
    /// Each iterator subscribes when it is created, that is, when the `for await` loop starts; see
    /// ``NotificationSequence`` for when it ends. Unlike a dropped ``Disposable``, a dropped iterator stops
    /// observing. A failure is reported to `onFailure`, or to ``NotificationDecodingFailure/handler``, and never
    /// ends the sequence.
    ///
    /// - Parameters:
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered. The sequence holds it
    ///     weakly; once it is gone, the sequence ends at the next post of the name.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - bufferingPolicy: How many payloads wait for a slow consumer. Defaults to `.unbounded`.
    ///   - onFailure: Receives the notifications that could not be converted, on the posting thread.
    /// - Returns: The sequence of payloads.
    @_disfavoredOverload
    public func payloads(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        bufferingPolicy: NotificationBufferingPolicy = .unbounded,
        onFailure: NotificationDecodingFailure.Handler? = nil
    ) -> NotificationSequence<Info> {
        makePayloadSequence(object: object, center: center, bufferingPolicy: bufferingPolicy, onFailure: onFailure)
    }

    /// The sequence of payloads: each iterator is one ``makeSubscription(_:reading:_:)``.
    func makePayloadSequence(
        object: AnyObject?,
        center: NotificationCenter,
        bufferingPolicy: NotificationBufferingPolicy,
        onFailure: NotificationDecodingFailure.Handler?
    ) -> NotificationSequence<Info> {
        let handle = self
        let filter = SequenceFilter(object)
        return NotificationSequence(bufferingPolicy: bufferingPolicy) { yield in
            // The filter object died before iteration began: nothing can match any more. Returning without
            // keeping `yield` releases it, which finishes the stream.
            guard let options = filter.options(center: center, onFailure: onFailure) else { return Disposable {} }
            return handle.makeSubscription(options, reading: handle.payload, yield)
        }
    }

}

extension Notificatable where Info == Never {
    /// The posts of this payload-less notification, as an asynchronous sequence of `Void`.
    ///
    /// ```swift
    /// for await _ in didLogout.notifications(center: center) {
    ///     reset()
    /// }
    /// ```
    ///
    /// Each iterator subscribes when it is created; see ``NotificationSequence`` for when it ends. Unlike a dropped
    /// ``Disposable``, a dropped iterator stops observing.
    ///
    /// - Parameters:
    ///   - object: If given, only posts whose object is this instance (`===`) are delivered. The sequence holds it
    ///     weakly; once it is gone, the sequence ends at the next post of the name.
    ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
    ///   - bufferingPolicy: How many posts wait for a slow consumer. Defaults to `.unbounded`.
    /// - Returns: The sequence of posts.
    public func notifications(
        object: AnyObject? = nil,
        center: NotificationCenter = .default,
        bufferingPolicy: NotificationBufferingPolicy = .unbounded
    ) -> NotificationSequence<Void> {
        let handle = self
        let filter = SequenceFilter(object)
        return NotificationSequence(bufferingPolicy: bufferingPolicy) { yield in
            guard let options = filter.options(center: center) else { return Disposable {} }
            return handle.makeSubscription(options, reading: handle.signal, yield)
        }
    }
}
