import Foundation
import Notificatable
import Testing

struct KeyboardInfo: Codable, Equatable {
    var frameBegin: CGRect
    var frameEnd: CGRect
    var centerBegin: CGPoint
    var centerEnd: CGPoint
    var animationDuration: Double
    var animationCurve: Int
    var isLocal: Bool
}

@Test func keyboardSmoke() throws {
    let userInfo: [AnyHashable: Any] = [
        "UIKeyboardFrameBeginUserInfoKey": NSValue(rect: CGRect(x: 0, y: 800, width: 390, height: 300)),
        "UIKeyboardFrameEndUserInfoKey": NSValue(rect: CGRect(x: 0, y: 500, width: 390, height: 300)),
        "UIKeyboardCenterBeginUserInfoKey": NSValue(point: CGPoint(x: 195, y: 950)),
        "UIKeyboardCenterEndUserInfoKey": NSValue(point: CGPoint(x: 195, y: 650)),
        "UIKeyboardAnimationDurationUserInfoKey": NSNumber(value: 0.25),
        "UIKeyboardAnimationCurveUserInfoKey": NSNumber(value: 7),
        "UIKeyboardIsLocalUserInfoKey": NSNumber(value: true),
    ]
    let decoder = UserInfoDecoder()
    decoder.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    let info = try decoder.decode(KeyboardInfo.self, from: userInfo)
    #expect(info.frameEnd == CGRect(x: 0, y: 500, width: 390, height: 300))
    #expect(info.centerBegin == CGPoint(x: 195, y: 950))
    #expect(info.animationCurve == 7)
    #expect(info.isLocal)
    let encoder = UserInfoEncoder()
    encoder.keyEncodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
    let encoded = try encoder.encode(info)
    #expect(encoded["UIKeyboardFrameEndUserInfoKey"] != nil)
    #expect(try decoder.decode(KeyboardInfo.self, from: encoded) == info)

    var bad = userInfo
    bad["UIKeyboardCenterEndUserInfoKey"] = NSValue(rect: .zero)
    do {
        _ = try decoder.decode(KeyboardInfo.self, from: bad)
        Issue.record("expected an error")
    } catch DecodingError.typeMismatch(_, let context) {
        #expect(context.codingPath.map(\.stringValue) == ["centerEnd"])
        print(context.debugDescription)
    }
}
