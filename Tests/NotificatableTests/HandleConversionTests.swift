import Foundation
import Testing

@testable import Notificatable

@Suite struct HandleConversionTests {
    @Test func wrongPayloadTypeIsReportedNotDeliveredAndOthersAreServed() throws {
        let center = NotificationCenter()
        let name = uniqueName()
        let typed = Notificatable<User>.name(name)
        let stringly = Notificatable<String>.name(name)
        let never = Notificatable<Never>.name(name)
        let sender = Sender()
        let failures = FailureRecorder()
        let delivered = Counter()
        let others = ValueRecorder<String>()
        let bag = DisposeBag()
        typed.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }.store(in: bag)
        stringly.subscribe(center: center) { note in others.append(note.userInfo) }.store(in: bag)
        never.subscribe(center: center) { _ in others.append("never") }.store(in: bag)

        stringly.post("oops", object: sender, center: center)

        #expect(delivered.count == 0)
        #expect(others.values == ["oops", "never"])
        let failure = try #require(failures.values.first)
        #expect(failures.count == 1)
        #expect(failure.kind == .payloadTypeMismatch)
        #expect(paths(failure) == [NotificatableUserInfoKey])
        #expect(failure.name.rawValue == name)
        #expect(ObjectIdentifier(failure.payloadType) == ObjectIdentifier(User.self))
        #expect(failure.payloadTypeName.hasSuffix("User"))
        #expect((failure.object as AnyObject?) === sender)
        guard case DecodingError.typeMismatch(let type, _)? = failure.error as? DecodingError else {
            Issue.record("expected a typeMismatch, got \(failure.error)")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(User.self))
        #expect(failure.description.contains("payloadTypeMismatch"))
    }

    @Test func reservedKeyAloneDecidesEvenWhenPlainKeysWouldDecode() throws {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let handle = name.notificatable(userInfoType: User.self)
        let converterCalls = Counter()
        let withConverter = handle.addingConverter { _ in
            converterCalls.increment()
            return User(name: "converted", age: 0)
        }
        let failures = FailureRecorder()
        let delivered = Counter()
        let d = withConverter.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: ["name": "Ada", "age": 36, NotificatableUserInfoKey: 12])
        #expect(delivered.count == 0)
        #expect(converterCalls.count == 0)
        #expect(failures.values.map(\.kind) == [.payloadTypeMismatch])
    }

    @Test func convertersRunInOrderAndFirstValueWins() throws {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let calls = ValueRecorder<String>()
        let handle = name.notificatable(userInfoType: OpaqueBox.self)
            .addingConverter { _ in
                calls.append("first")
                return nil
            }
            .addingConverter { userInfo in
                calls.append("second")
                return (userInfo?["value"] as? Int).map(OpaqueBox.init)
            }
            .addingConverter { _ in
                calls.append("third")
                return OpaqueBox(-1)
            }
        let values = ValueRecorder<Int>()
        let d = handle.subscribe(center: center) { note in values.append(note.userInfo.value) }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: ["value": 7])
        #expect(values.values == [7])
        #expect(calls.values == ["first", "second"])

        // A typed post skips the converters.
        handle.post(OpaqueBox(9), center: center)
        #expect(values.values == [7, 9])
        #expect(calls.count == 2)
    }

    @Test func throwingConverterIsReportedWithItsError() throws {
        struct Refused: Error, Equatable {}
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let handle = name.notificatable(userInfoType: OpaqueBox.self)
            .addingConverter { _ in throw Refused() }
            .addingConverter { _ in OpaqueBox(1) }
        let failures = FailureRecorder()
        let delivered = Counter()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: nil)
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .converterFailed)
        #expect(failure.error as? Refused == Refused())
        #expect(failure.codingPath.isEmpty)
        #expect(delivered.count == 0)
    }

    @Test func nonDecodablePayloadWithoutConverterReportsNoConversion() throws {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let handle = name.notificatable(userInfoType: OpaqueBox.self)
        let failures = FailureRecorder()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: ["value": 1])
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .noConversion)
        guard case DecodingError.valueNotFound? = failure.error as? DecodingError else {
            Issue.record("expected valueNotFound, got \(failure.error)")
            return
        }
    }

    @Test func payloadFromNotificationThrowsTheReportedFailure() throws {
        let name = uniqueName()
        let typed = Notificatable<User>.name(name)
        let note = Notificatable<Int>.name(name).makeNotification(3)
        do {
            _ = try typed.payload(from: note)
            Issue.record("expected a failure")
        } catch {
            #expect(error.kind == .payloadTypeMismatch)
            #expect(paths(error) == [NotificatableUserInfoKey])
        }
        let user = User(name: "Ada", age: 36)
        #expect(try typed.payload(from: typed.makeNotification(user)) == user)
    }

    @Test func makeNotificationCarriesThePayloadUnderTheReservedKey() {
        let handle = Notificatable<User>.name(uniqueName())
        let user = User(name: "Ada", age: 36)
        let sender = Sender()
        let note = handle.makeNotification(user, object: sender)
        #expect(note.name == handle.name)
        #expect((note.object as AnyObject?) === sender)
        #expect(note.userInfo?.count == 1)
        #expect(note.userInfo?[NotificatableUserInfoKey] as? User == user)
    }

    @Test func typedPostIsVisibleToALegacyObserver() {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName())
        let seen = ValueRecorder<User?>()
        let token = center.addObserver(forName: handle.name, object: nil, queue: nil) { note in
            seen.append(note.userInfo?[NotificatableUserInfoKey] as? User)
        }
        defer { center.removeObserver(token) }
        handle.post(User(name: "Ada", age: 36), center: center)
        #expect(seen.values == [User(name: "Ada", age: 36)])
    }

    @Test func failureIsNotReportedForADisposedSubscription() {
        let center = NotificationCenter()
        let name = uniqueName()
        let failures = FailureRecorder()
        let d = Notificatable<User>.name(name).subscribe(center: center, onFailure: failures.handler) { _ in }
        d.dispose()
        Notificatable<Int>.name(name).post(1, center: center)
        #expect(failures.count == 0)
    }
}

/// These need the lead's `UserInfoDecoder`/`UserInfoEncoder` implementation.
@Suite struct HandleLegacyBridgingTests {
    @Test func legacyPostReachesTypedSubscriberOfEitherConstructionForm() {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let byName = Notificatable<User>.name(name.rawValue)
        let byWrapping = name.notificatable(userInfoType: User.self)
        let received = ValueRecorder<User>()
        let failures = FailureRecorder()
        let bag = DisposeBag()
        byName.subscribe(center: center, onFailure: failures.handler) { note in received.append(note.userInfo) }
            .store(in: bag)
        byWrapping.subscribe(center: center, onFailure: failures.handler) { note in received.append(note.userInfo) }
            .store(in: bag)
        center.post(name: name, object: nil, userInfo: ["name": "Ada", "age": 36])
        #expect(failures.values.map(\.description) == [])
        #expect(received.values == [User(name: "Ada", age: 36), User(name: "Ada", age: 36)])
    }

    @Test func nilUserInfoDecodesAsEmpty() {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let handle = name.notificatable(userInfoType: OptionalFields.self)
        let received = ValueRecorder<OptionalFields>()
        let failures = FailureRecorder()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { note in received.append(note.userInfo) }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: nil)
        #expect(failures.values.map(\.description) == [])
        #expect(received.values == [OptionalFields(name: nil, age: nil)])
    }

    @Test func legacyDecodingFailureCarriesKindAndPath() throws {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let handle = Notificatable<User>.name(name.rawValue)
        let failures = FailureRecorder()
        let delivered = Counter()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { _ in delivered.increment() }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: ["name": "Ada", "age": "thirty-six"])
        let failure = try #require(failures.values.first)
        #expect(failure.kind == .decodingFailed)
        #expect(paths(failure) == ["age"])
        guard case DecodingError.typeMismatch? = failure.error as? DecodingError else {
            Issue.record("expected typeMismatch, got \(failure.error)")
            return
        }
        #expect(delivered.count == 0)
    }

    @Test func handleDecoderIsUsed() throws {
        let center = NotificationCenter()
        let name = Notification.Name(uniqueName())
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UI", suffix: "Key")
        let handle = name.notificatable(userInfoType: User.self, decoder: decoder)
        decoder.keyDecodingStrategy = .useDefaultKeys  // the handle keeps its snapshot
        let received = ValueRecorder<User>()
        let failures = FailureRecorder()
        let d = handle.subscribe(center: center, onFailure: failures.handler) { note in received.append(note.userInfo) }
        defer { d.dispose() }
        center.post(name: name, object: nil, userInfo: ["UINameKey": "Ada", "UIAgeKey": 36])
        #expect(failures.values.map(\.description) == [])
        #expect(received.values == [User(name: "Ada", age: 36)])

        let snake = UserInfoDecoder()
        snake.keyDecodingStrategy = .convertFromSnakeCase
        let other = Notificatable<OptionalFields>.name(name.rawValue).decoding(with: snake)
        #expect(
            try other.payload(from: Notification(name: name, object: nil, userInfo: ["name": "x"]))
                == OptionalFields(name: "x", age: nil))
    }

    @Test func plainKeysReachALegacyObserver() {
        let center = NotificationCenter()
        let handle = Notificatable<User>.name(uniqueName()).postingPlainKeys()
        let seen = ValueRecorder<String>()
        let token = center.addObserver(forName: handle.name, object: nil, queue: nil) { note in
            let name = note.userInfo?["name"] as? String
            let age = note.userInfo?["age"] as? Int
            seen.append("\(name ?? "nil") \(age.map(String.init) ?? "nil")")
        }
        defer { center.removeObserver(token) }
        let typed = ValueRecorder<User>()
        let d = handle.subscribe(center: center) { note in typed.append(note.userInfo) }
        defer { d.dispose() }
        handle.post(User(name: "Ada", age: 36), center: center)
        #expect(seen.values == ["Ada 36"])
        #expect(typed.values == [User(name: "Ada", age: 36)])
    }

    @Test func plainKeysAreOffByDefault() {
        let note = Notificatable<User>.name(uniqueName()).makeNotification(User(name: "Ada", age: 36))
        #expect(note.userInfo?["name"] == nil)
    }
}

@Suite struct HandleNeverConversionTests {
    /// `Never` is `Decodable` in Swift; a `Never` handle must not try to decode.
    @Test func neverHandlesHaveNoDecodingStep() {
        #expect(Notificatable.withoutPayload("A").conversion.decoding == nil)
        #expect(Notification.Name("B").notificatable().conversion.decoding == nil)
        #expect(Notificatable<User>.name("C").conversion.decoding != nil)
        #expect(Notificatable<OpaqueBox>.name("D").conversion.decoding == nil)
    }

    /// The general form on a `Never` handle no longer compiles (see `NoPayloadMisuseTests`). Reached anyway, from
    /// generic code, where the handle's type is not known to be `Never`, it can never produce a payload: it reports,
    /// never crashes.
    @Test func generalFormOnANeverHandleReportsInsteadOfDelivering() throws {
        func subscribeGenerally<Info>(
            _ handle: Notificatable<Info>, center: NotificationCenter,
            onFailure: @escaping NotificationDecodingFailure.Handler
        ) -> Disposable {
            handle.subscribe(center: center, onFailure: onFailure) { (_: TypedNotification<Info>) in }
        }
        let center = NotificationCenter()
        let never = Notificatable.withoutPayload(uniqueName())
        let failures = FailureRecorder()
        let d = subscribeGenerally(never, center: center, onFailure: failures.handler)
        defer { d.dispose() }
        never.post(center: center)
        #expect(failures.values.map(\.kind) == [.noConversion])
    }
}
