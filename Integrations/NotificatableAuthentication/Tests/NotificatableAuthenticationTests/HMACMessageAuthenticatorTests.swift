import Foundation
import NotificatableRelay
import Testing

@testable import NotificatableAuthentication

/// HMACMessageAuthenticator on its own: the documented framing, and every way a message or a key is refused. No
/// server needed.
@Suite struct HMACMessageAuthenticatorTests {
    /// The documented example's secret: the 32 bytes 00 01 02 … 1f.
    let exampleSecret = Data(0..<32)
    let exampleMessage = Data(
        #"{"sequence":7,"version":1,"name":"PaymentCaptured","sender":"billing-1","payload":{"amount":1250,"paymentID":"P-17"}}"#
            .utf8)
    let exampleSealed = "hmac-sha256:2026-11:0GE3fh8sOBLeX6UfP+oX8ILt53UVR4sDyaJiHuvm+rE=\n"

    func authenticator(_ keys: (String, UInt8)...) throws -> HMACMessageAuthenticator {
        try HMACMessageAuthenticator(
            keys: keys.map { id, seed in try .init(id: id, secret: Data(repeating: seed, count: 32)) })
    }

    @Test func theDocumentedExampleIsWhatItWritesAndTheArticleShowsIt() throws {
        let authenticator = try HMACMessageAuthenticator(keyID: "2026-11", secret: exampleSecret)
        let sealed = authenticator.seal(exampleMessage)
        let expected = Data(exampleSealed.utf8) + exampleMessage
        #expect(String(decoding: sealed, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(try authenticator.open(sealed) == exampleMessage)

        // The article shows the same two lines, so the example cannot drift from the code.
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/NotificatableRelay/Documentation.docc/AcrossProcesses.md"),
            encoding: .utf8)
        #expect(article.contains(String(decoding: expected, as: UTF8.self)))
    }

    @Test func sealAddsExactlyTheOverheadAndOpenReturnsTheExactBytes() throws {
        let authenticator = try authenticator(("k", 1))
        for message in [Data(), Data("{}".utf8), exampleMessage, Data(repeating: 0x0A, count: 3), Data([0xFF, 0x00])] {
            let sealed = authenticator.seal(message)
            #expect(sealed.count == message.count + authenticator.maximumOverhead)
            #expect(try authenticator.open(sealed) == message)
            // A slice of a larger buffer (as a transport may hand over) opens the same.
            let padded = Data("xx".utf8) + sealed
            #expect(try authenticator.open(padded[padded.index(padded.startIndex, offsetBy: 2)...]) == message)
        }
        #expect(authenticator.maximumOverhead == "hmac-sha256:k:".utf8.count + 44 + 1)
    }

    @Test func anUnsignedMessageIsRefusedAsMissingTag() throws {
        let authenticator = try authenticator(("k", 1))
        for bytes in [exampleMessage, Data(), Data("hmac-sha256".utf8), Data("HMAC-SHA256:k:".utf8)] {
            #expect(throws: MessageAuthenticationError(kind: .missingTag)) { try authenticator.open(bytes) }
        }
    }

    @Test func aMessageSignedWithAnotherSecretOrAlteredIsRefusedAsInvalidTag() throws {
        let genuine = try authenticator(("k", 1))
        let impostor = try authenticator(("k", 2))
        let forged = impostor.seal(exampleMessage)
        #expect(throws: MessageAuthenticationError(kind: .invalidTag, keyID: "k")) { try genuine.open(forged) }

        let sealed = genuine.seal(exampleMessage)
        let headerLength = genuine.maximumOverhead
        // Flip one bit of every byte of the message, one at a time: each is refused.
        for offset in headerLength..<sealed.count {
            var altered = sealed
            altered[offset] ^= 0x01
            #expect(throws: MessageAuthenticationError(kind: .invalidTag, keyID: "k")) { try genuine.open(altered) }
        }
        // A byte appended or removed is an alteration too.
        #expect(throws: MessageAuthenticationError(kind: .invalidTag, keyID: "k")) {
            try genuine.open(sealed + Data(" ".utf8))
        }
        #expect(throws: MessageAuthenticationError(kind: .invalidTag, keyID: "k")) {
            try genuine.open(sealed.dropLast())
        }
        // A changed tag (still valid Base64 of 32 bytes): a character in its middle.
        var tagChanged = sealed
        let middle = headerLength - 20
        tagChanged[middle] = tagChanged[middle] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: MessageAuthenticationError(kind: .invalidTag, keyID: "k")) { try genuine.open(tagChanged) }
    }

    @Test func aTagUnderAKeyItDoesNotHoldIsRefusedAsUnknownKey() throws {
        let authenticator = try authenticator(("2026-10", 1))
        let sealed = try self.authenticator(("2026-11", 1)).seal(exampleMessage)  // same secret, other id
        #expect(throws: MessageAuthenticationError(kind: .unknownKey, keyID: "2026-11")) {
            try authenticator.open(sealed)
        }
        // An id that is not a valid id is not repeated in the error (it is attacker-controlled text).
        let odd = Data("hmac-sha256:a b:\(String(repeating: "A", count: 43))=\n{}".utf8)
        #expect(throws: MessageAuthenticationError(kind: .unknownKey, keyID: nil)) { try authenticator.open(odd) }
    }

    @Test func aMalformedHeaderLineIsRefusedAsMalformedTag() throws {
        let authenticator = try authenticator(("k", 1))
        let tag = String(repeating: "A", count: 43) + "="
        let cases = [
            "hmac-sha256:k:\(tag)",  // no newline
            "hmac-sha256:k\n{}",  // no tag
            "hmac-sha256:k:\(tag.dropLast())\n{}",  // 43 characters
            "hmac-sha256:k:\(tag)=\n{}",  // 45 characters
            "hmac-sha256:k:\(String(repeating: "!", count: 44))\n{}",  // not Base64
            "hmac-sha256:k:x:\(tag)\n{}",  // three fields
            "hmac-sha256:\(String(repeating: "k", count: 200)):\(tag)\n{}",  // header longer than any valid one
        ]
        for text in cases {
            #expect(throws: MessageAuthenticationError(kind: .malformedTag), "\(text)") {
                try authenticator.open(Data(text.utf8))
            }
        }
    }

    /// A tag has one spelling: its canonical Base64. 32 bytes take 43 characters and the padding, and the last of
    /// the 43 holds 4 bits of the MAC and 2 that must be zero, which `Data(base64Encoded:)` ignores; so each tag had
    /// four byte-different spellings that all opened (a replay filter keyed on the bytes would count four messages).
    /// The three that are not canonical are refused as malformed. (Before, all four opened: issue 29.6.)
    @Test func onlyTheCanonicalBase64OfATagOpens() throws {
        let authenticator = try authenticator(("k", 1))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let lastTagCharacter = "hmac-sha256:k:".utf8.count + 42
        var generator = SystemRandomNumberGenerator()
        var messages = [exampleMessage, Data(), Data("{}".utf8)]
        for _ in 0..<50 {
            let count = Int.random(in: 1...200, using: &generator)
            messages.append(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        }
        for message in messages {
            let sealed = authenticator.seal(message)
            #expect(try authenticator.open(sealed) == message)
            let value = try #require(alphabet.firstIndex(of: sealed[lastTagCharacter]))
            #expect(value % 4 == 0, "the canonical spelling has the two spare bits clear")
            for spare in 1...3 {
                var variant = sealed
                variant[lastTagCharacter] = alphabet[value | spare]
                #expect(throws: MessageAuthenticationError(kind: .malformedTag)) { try authenticator.open(variant) }
            }
        }
    }

    @Test func rotationSignsWithTheFirstKeyAndAcceptsAnyListed() throws {
        let rotated = try authenticator(("new", 2), ("old", 1))
        let rotating = try authenticator(("old", 1), ("new", 2))
        let stale = try authenticator(("old", 1))
        #expect(rotated.signingKey.id == "new")
        #expect(rotated.keys.map(\.id) == ["new", "old"])

        let fromRotated = rotated.seal(exampleMessage)
        #expect(fromRotated.starts(with: Data("hmac-sha256:new:".utf8)))
        #expect(try rotating.open(fromRotated) == exampleMessage)
        #expect(throws: MessageAuthenticationError(kind: .unknownKey, keyID: "new")) { try stale.open(fromRotated) }

        let fromRotating = rotating.seal(exampleMessage)
        #expect(try rotated.open(fromRotating) == exampleMessage)
        #expect(try stale.open(fromRotating) == exampleMessage)
    }

    @Test func keysAreCheckedWhenCreatedWithAThrownErrorNeverATrap() throws {
        #expect(throws: MessageAuthenticationError(kind: .secretTooShort, keyID: "k", size: 31)) {
            try HMACMessageAuthenticator.Key(id: "k", secret: Data(repeating: 1, count: 31))
        }
        #expect(throws: MessageAuthenticationError(kind: .secretTooShort, keyID: "k", size: 0)) {
            try HMACMessageAuthenticator(keyID: "k", secret: [UInt8]())
        }
        _ = try HMACMessageAuthenticator.Key(id: "k", secret: [UInt8](repeating: 1, count: 32))
        _ = try HMACMessageAuthenticator.Key(id: String(repeating: "a", count: 64), secret: exampleSecret)

        for id in ["", "a:b", "a\nb", "a b", "é", String(repeating: "a", count: 65)] {
            #expect(throws: MessageAuthenticationError(kind: .invalidKeyID, keyID: id)) {
                try HMACMessageAuthenticator.Key(id: id, secret: exampleSecret)
            }
        }
        #expect(throws: MessageAuthenticationError(kind: .noKeys)) { try HMACMessageAuthenticator(keys: []) }
        let key = try HMACMessageAuthenticator.Key(id: "k", secret: exampleSecret)
        #expect(throws: MessageAuthenticationError(kind: .duplicateKeyID, keyID: "k")) {
            try HMACMessageAuthenticator(keys: [key, key])
        }
    }

    @Test func noDescriptionShowsTheSecret() throws {
        let secret = Data("a secret that must never be logged".utf8)
        let key = try HMACMessageAuthenticator.Key(id: "k", secret: secret)
        let authenticator = try HMACMessageAuthenticator(keys: [key])
        let base64 = secret.base64EncodedString()
        for text in ["\(key)", String(reflecting: key), "\(authenticator)", String(reflecting: authenticator)] {
            #expect(!text.contains("a secret"), "\(text)")
            #expect(!text.contains(base64), "\(text)")
        }
        #expect("\(key)" == #"HMAC-SHA256 key "k""#)
        #expect(
            "\(MessageAuthenticationError(kind: .secretTooShort, keyID: "k", size: 8))"
                == #"The secret of key "k" is 8 bytes; at least 32 random bytes are needed."#)
    }
}
