// The ```swift blocks of *Notificatable and Foundation's Typed Messages*, verbatim (see DocCExamples.swift). They
// need UIKit and the SF-0011 message types of the 2025 SDKs, so they sit under `#if canImport(UIKit)`: type-checked
// where UIKit exists, only parsed on Linux.

// apple-check: needs UIKit's own types and the SF-0011 messages of the 2025 SDKs, which no shim provides
#if canImport(UIKit)
import Foundation
import Notificatable
import UIKit
#endif

// apple-check: needs UIKit's own types and the SF-0011 messages of the 2025 SDKs, which no shim provides
#if canImport(UIKit)

/// The payload, available on every system the app supports.
struct KeyboardFrameInfo: Codable, Sendable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool?

    static let decoder: UserInfoDecoder = {
        let decoder = UserInfoDecoder()
        decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        return decoder
    }()

    static let encoder: UserInfoEncoder = {
        let encoder = UserInfoEncoder()
        encoder.keyEncodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        encoder.encodesGeometryAsNSValue = true  // legacy observers call cgRectValue
        return encoder
    }()
}

/// The message, on the systems that have SF-0011.
@available(iOS 26.0, *)
struct KeyboardWillShowMessage: NotificationCenter.MainActorMessage {
    typealias Subject = UIScreen

    static var name: Notification.Name { UIResponder.keyboardWillShowNotification }

    var info: KeyboardFrameInfo

    @MainActor
    static func makeMessage(_ notification: Notification) -> KeyboardWillShowMessage? {
        do {
            return KeyboardWillShowMessage(
                info: try KeyboardFrameInfo.decoder.decode(KeyboardFrameInfo.self, from: notification.userInfo)
            )
        } catch {
            // Foundation skips the observer silently when this returns nil: say why first.
            print("KeyboardWillShowMessage: \(error)")
            return nil
        }
    }

    @MainActor
    static func makeNotification(_ message: KeyboardWillShowMessage, object: UIScreen?) -> Notification {
        let userInfo: [AnyHashable: Any]
        do {
            userInfo = try KeyboardFrameInfo.encoder.encode(message.info)
        } catch {
            print("KeyboardWillShowMessage: \(error)")
            userInfo = [:]
        }
        return Notification(name: name, object: object, userInfo: userInfo)
    }
}
#endif

// apple-check: needs UIKit's own types and the SF-0011 messages of the 2025 SDKs, which no shim provides
#if canImport(UIKit)
func typedMessagesHandle() {
    let keyboardWillShow = UIResponder.keyboardWillShowNotification
        .notificatable(userInfoType: KeyboardFrameInfo.self, decoder: KeyboardFrameInfo.decoder)
    _ = keyboardWillShow
}
#endif
