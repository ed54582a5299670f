import Foundation

/// Whether `value` can be asked for `objCType` and `getValue(_:)` without trapping: the decoder's own guard,
/// ``NSValue/answersObjCType``, for the package's other modules (the fixture capture reads an `NSValue`'s kind as the
/// decoder does). Any `NSValue` for which it is `false` is a value of unknown kind.
package func nsValueAnswersObjCType(_ value: NSValue) -> Bool {
    value.answersObjCType
}
