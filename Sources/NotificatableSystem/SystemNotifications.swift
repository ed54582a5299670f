import Foundation
import Notificatable

/// Typed handles for well-known system notifications that carry a documented `userInfo`.
///
/// Each handle is built from the notification's raw name string, so it compiles and works on every platform, and
/// each payload type reads the system's boxed values into natural Swift types: keyboard frames become `CGRect`,
/// an animation curve becomes a ``KeyboardAnimationCurve`` that keeps values it does not know.
///
/// ```swift
/// import NotificatableSystem
///
/// let subscription = SystemNotifications.keyboardWillShow.subscribe { note in
///     let keyboard = note.userInfo
///     bottomInset = keyboard.frameEnd.height
///     animate(duration: keyboard.animationDuration, options: keyboard.animationCurve.animationOptionsRawValue)
/// }
/// ```
///
/// A notification whose `userInfo` does not have the documented shape never reaches the handler; it is reported
/// to `onFailure:` (or to `NotificationDecodingFailure/handler`) with the coding path of the bad key.
///
/// ## Where the raw strings come from
///
/// A misspelt name or key means that notifications silently never arrive, and no test on Linux can post the real
/// ones. Every raw string in this module therefore has a comment beside it that cites where its value is
/// documented and how strong that evidence is:
///
/// - **runtime-observed**: printed or logged by a real Apple OS, or found in a decompiled Apple binary;
/// - **runtime-tested**: shipping code matches the literal and relies on it;
/// - **value stated (reimpl.)**: an open-source reimplementation of the framework defines the constant with that
///   literal;
/// - **convention**: only the SDK header's symbol is known, and the value is assumed to equal the symbol's name.
///   These are unconfirmed.
///
/// On Apple platforms you can check a handle against the SDK symbol in a test that runs on a simulator:
///
/// ```swift
/// #expect(SystemNotifications.keyboardWillShow.name == UIResponder.keyboardWillShowNotification)
/// ```
///
/// In tests, post a dictionary shaped like the system's on a private center; see ``SystemNotifications`` members
/// for the shape each one expects.
public enum SystemNotifications {}
