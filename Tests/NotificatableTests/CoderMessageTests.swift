import Foundation
import Notificatable
import Testing

// Messages (issue 15 item 8): one path format, Swift's (`items[1].quantity`), and a missing key that exists under
// another key strategy's spelling names the strategy.

private struct MessageOrder: Codable {
    var items: [Item]
    struct Item: Codable {
        var quantity: Int
    }
}

private struct Priced: Decodable {
    var unitPrice: Double
}

private struct Frame: Decodable {
    var frameEnd: CGRect
}

private struct IDs: Decodable {
    var byID: [Int: Int]
}

@Suite("Coder: messages")
struct CoderMessageTests {
    /// Decodes `payload` through a handle and returns the failure's description.
    private func failureDescription<Info: Decodable & Sendable>(
        of type: Info.Type, _ userInfo: [AnyHashable: Any]
    ) throws -> String {
        let handle = Notification.Name("CoderMessage").notificatable(userInfoType: Info.self)
        do {
            _ = try handle.payload(from: Notification(name: handle.name, object: nil, userInfo: userInfo))
            Issue.record("decoded")
            return ""
        } catch let failure {
            return failure.description
        }
    }

    @Test func failureDescriptionsWriteThePathAsSwiftDoes() throws {
        let nested = try failureDescription(
            of: MessageOrder.self, ["items": [["quantity": 1], ["quantity": "two"]]])
        #expect(nested.contains("(decodingFailed at items[1].quantity): Expected a number"))
        let intKey = try failureDescription(of: IDs.self, ["byID": [3: "x"] as [AnyHashable: Any]])
        #expect(intKey.contains("(decodingFailed at byID[3]): "))
        // A missing key's path is its dictionary's (JSONDecoder's rule), and the line still says where: at the top
        // level, never `at ""` (issue 33 item 4).
        let top = try failureDescription(of: Priced.self, [:])
        #expect(top.contains("(decodingFailed at the top level): No value for key \"unitPrice\"."))
        #expect(!top.contains("at \""))
    }

    @Test func aMissingKeyPresentInSnakeCaseNamesTheStrategy() throws {
        let context = expectDecodingError(.keyNotFound, at: [], missingKey: "unitPrice") {
            try UserInfoDecoder().decode(Priced.self, from: ["unit_price": 9.5])
        }
        #expect(
            context?.debugDescription
                == "No value for key \"unitPrice\". The dictionary has \"unit_price\": set keyDecodingStrategy to "
                + ".convertFromSnakeCase to read it as unitPrice.")
        // Nested, under the affixed strategy too.
        let affixed = UserInfoDecoder()
        affixed.keyDecodingStrategy = .affixed(prefix: "X", suffix: "")
        expectDecodingError(.keyNotFound, at: [], missingKey: "unitPrice", message: ".convertFromSnakeCase") {
            try affixed.decode(Priced.self, from: ["unit_price": 9.5])
        }
        // No hint when there is nothing to point at.
        let plain = expectDecodingError(.keyNotFound, at: [], missingKey: "unitPrice") {
            try UserInfoDecoder().decode(Priced.self, from: ["price": 9.5])
        }
        #expect(plain?.debugDescription == "No value for key \"unitPrice\".")
    }

    /// Issue 41: "No value for key "userId"" said nothing of the `userID` that was there.
    @Test func aMissingKeyNamesTheKeysOfTheDictionaryThatComeClose() throws {
        struct Login: Decodable { var userId: Int }
        struct Session: Decodable { var login: Login }
        let context = expectDecodingError(.keyNotFound, at: [], missingKey: "userId") {
            try UserInfoDecoder().decode(Login.self, from: ["userID": 7, "name": "Ada"])
        }
        #expect(
            context?.debugDescription
                == "No value for key \"userId\". The dictionary has \"userID\", close to \"userId\": is the key "
                + "spelled differently?")
        // A key renamed by a typo, nested: the path is still the dictionary's.
        expectDecodingError(
            .keyNotFound, at: ["login"], missingKey: "userId", message: "The dictionary has \"user_ID\", \"usrId\""
        ) {
            try UserInfoDecoder().decode(Session.self, from: ["login": ["usrId": 7, "user_ID": 8, "theme": "dark"]])
        }
        // Nothing close: no sentence.
        let far = expectDecodingError(.keyNotFound, at: [], missingKey: "userId") {
            try UserInfoDecoder().decode(Login.self, from: ["name": "Ada"])
        }
        #expect(far?.debugDescription == "No value for key \"userId\".")
    }

    @Test func aMissingKeyPresentWithAffixesNamesTheStrategy() throws {
        let context = expectDecodingError(.keyNotFound, at: [], missingKey: "frameEnd") {
            try UserInfoDecoder().decode(
                Frame.self,
                from: [
                    "UIKeyboardFrameEndUserInfoKey": NSValue(rect: .zero),
                    "UIKeyboardFrameEndUserInfoKeyOld": NSValue(rect: .zero),
                ])
        }
        #expect(
            context?.debugDescription.hasSuffix(
                "The dictionary has \"UIKeyboardFrameEndUserInfoKey\": set keyDecodingStrategy to "
                    + ".affixed(prefix: \"UIKeyboard\", suffix: \"UserInfoKey\") to read it as frameEnd.") == true)
        // And the other way round: affixes set, but the dictionary has the plain key.
        let affixed = UserInfoDecoder()
        affixed.keyDecodingStrategy = .affixed(prefix: "UIKeyboard", suffix: "UserInfoKey")
        expectDecodingError(
            .keyNotFound, at: [], missingKey: "frameEnd", message: "has \"frameEnd\", without the affixes"
        ) {
            try affixed.decode(Frame.self, from: ["frameEnd": NSValue(rect: .zero)])
        }
    }
}
