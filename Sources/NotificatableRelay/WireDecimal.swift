import Foundation

/// A decimal number as its digits and a power of ten, for one exact sum: a `Date`'s seconds since 2001 (how `Date`
/// stores it) plus the 978,307,200 seconds from 1970 to 2001, which is what a `$date` holds on the wire.
///
/// Doing that sum in `Double` rounds: `Date()` came back from `Date(timeIntervalSince1970: d.timeIntervalSince1970)`
/// a few hundred nanoseconds off for most dates not made from a 1970 interval. So the writer adds the offset to the
/// shortest decimal digits of the interval exactly, and the reader subtracts it exactly from the digits it received and
/// only then rounds once, to the `Double` that those digits (the interval's own shortest digits) stand for: the same
/// `Date`, bit for bit. Any other JSON reader sees an ordinary number of seconds since 1970, correct to the last digit.
struct WireDecimal {
    private var isNegative: Bool
    /// The digits, most significant first, 0…9 each, without leading zeros; empty for zero.
    private var digits: [UInt8]
    /// The value is `digits × 10^exponent`.
    private var exponent: Int

    /// The largest input handled exactly; longer or more extreme numbers make `init` fail, and the caller falls back
    /// to `Double` arithmetic. A `Double`'s shortest form has at most 17 digits and an exponent within ±324.
    private static let maximumDigits = 1_100
    private static let maximumExponent = 400

    /// Reads a JSON number or a `Double.description` (`785692800.25`, `1e-07`, `-1.5e+20`, `-0.0`); `nil` for
    /// anything else, or beyond the limits.
    init?(_ text: String) {
        var utf8 = Substring(text).utf8[...]
        isNegative = utf8.first == UInt8(ascii: "-")
        if isNegative { utf8 = utf8.dropFirst() }
        var mantissa: [UInt8] = []
        var fractionDigits = 0
        var seenPoint = false
        while let byte = utf8.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), mantissa.count < Self.maximumDigits else {
                return nil
            }
            mantissa.append(byte - UInt8(ascii: "0"))
            if seenPoint { fractionDigits += 1 }
        }
        guard !mantissa.isEmpty else { return nil }
        var power = 0
        if !utf8.isEmpty {
            utf8 = utf8.dropFirst()
            let exponentText = String(decoding: utf8, as: UTF8.self)
            guard exponentText.count <= 6,
                let value = Int(exponentText.hasPrefix("+") ? String(exponentText.dropFirst()) : exponentText)
            else { return nil }
            power = value
        }
        let firstNonZero = mantissa.firstIndex { $0 != 0 } ?? mantissa.count
        digits = Array(mantissa[firstNonZero...])
        exponent = power - fractionDigits
        guard abs(exponent) <= Self.maximumDigits, digits.count + exponent <= Self.maximumExponent else { return nil }
    }

    /// This number plus `integer`, exactly.
    func adding(_ integer: Int) -> WireDecimal {
        var other = WireDecimal(integer: integer)
        var this = self
        let common = min(this.exponent, other.exponent)
        this.align(to: common)
        other.align(to: common)
        // Least significant first, for the arithmetic.
        let left = Array(this.digits.reversed())
        let right = Array(other.digits.reversed())
        var result = WireDecimal(isNegative: false, digits: [], exponent: common)
        if this.isNegative == other.isNegative {
            result.isNegative = this.isNegative
            result.digits = Self.add(left, right).reversed()
        } else if Self.compare(left, right) >= 0 {
            result.isNegative = this.isNegative
            result.digits = Self.subtract(left, right).reversed()
        } else {
            result.isNegative = other.isNegative
            result.digits = Self.subtract(right, left).reversed()
        }
        result.digits = Array(result.digits.drop { $0 == 0 })
        if result.digits.isEmpty { result.isNegative = false }
        return result
    }

    /// The number in plain decimal notation, with at least one digit after the point: `1764000000.25`,
    /// `1764000000.0`, `-0.5`.
    var plainText: String {
        var text = isNegative ? "-" : ""
        let characters = digits.map { Character(Unicode.Scalar($0 + UInt8(ascii: "0"))) }
        if exponent >= 0 {
            text += characters.isEmpty ? "0" : String(characters) + String(repeating: "0", count: exponent)
            return text + ".0"
        }
        let fraction = -exponent
        if characters.count > fraction {
            text += String(characters.dropLast(fraction)) + "." + String(characters.suffix(fraction))
        } else {
            text += "0." + String(repeating: "0", count: fraction - characters.count) + String(characters)
        }
        return text
    }

    /// The nearest `Double`, rounded once from the exact digits.
    var double: Double? {
        guard !digits.isEmpty else { return isNegative ? -0.0 : 0 }
        let characters = String(digits.map { Character(Unicode.Scalar($0 + UInt8(ascii: "0"))) })
        return Double((isNegative ? "-" : "") + characters + "e" + String(exponent))
    }

    // MARK: - Arithmetic on digit arrays

    private init(isNegative: Bool, digits: [UInt8], exponent: Int) {
        self.isNegative = isNegative
        self.digits = digits
        self.exponent = exponent
    }

    private init(integer: Int) {
        isNegative = integer < 0
        digits = String(integer.magnitude).utf8.map { $0 - UInt8(ascii: "0") }
        exponent = 0
        if digits == [0] { digits = [] }
    }

    /// Appends zeros so that the exponent becomes `target` (not above the current one).
    private mutating func align(to target: Int) {
        guard exponent > target else { return }
        if !digits.isEmpty { digits += [UInt8](repeating: 0, count: exponent - target) }
        exponent = target
    }

    /// Compares two magnitudes given least significant digit first.
    private static func compare(_ left: [UInt8], _ right: [UInt8]) -> Int {
        let left = Array(left.reversed().drop { $0 == 0 }.reversed())
        let right = Array(right.reversed().drop { $0 == 0 }.reversed())
        if left.count != right.count { return left.count < right.count ? -1 : 1 }
        for index in stride(from: left.count - 1, through: 0, by: -1) where left[index] != right[index] {
            return left[index] < right[index] ? -1 : 1
        }
        return 0
    }

    private static func add(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(max(left.count, right.count) + 1)
        var carry: UInt8 = 0
        for index in 0..<max(left.count, right.count) {
            let sum = (index < left.count ? left[index] : 0) + (index < right.count ? right[index] : 0) + carry
            result.append(sum % 10)
            carry = sum / 10
        }
        if carry > 0 { result.append(carry) }
        return result
    }

    /// `left - right`, for `left >= right`.
    private static func subtract(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(left.count)
        var borrow: Int = 0
        for index in 0..<left.count {
            var difference = Int(left[index]) - Int(index < right.count ? right[index] : 0) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 10 }
            result.append(UInt8(difference))
        }
        return result
    }
}

extension WireDecimal {
    /// `text` plus `integer`, exactly, in plain notation (see ``plainText``); `nil` if `text` is not a number or is
    /// beyond the limits.
    static func plainText(of text: String, adding integer: Int) -> String? {
        if let small = SmallDecimal(text), let sum = small.adding(integer) { return sum.plainText }
        return WireDecimal(text)?.adding(integer).plainText
    }

    /// The `Double` nearest to `text` plus `integer`, rounded once; `nil` if `text` is not a number or is beyond the
    /// limits.
    static func double(of text: String, adding integer: Int) -> Double? {
        if let small = SmallDecimal(text), let sum = small.adding(integer) { return sum.double }
        return WireDecimal(text)?.adding(integer).double
    }
}

/// The common case of ``WireDecimal`` without arrays: at most 18 significant digits and at most 9 after the point
/// (every date within a century of 2001 to the tenth of a microsecond), as one `Int64` and a power of ten.
private struct SmallDecimal {
    /// The value is `mantissa × 10^-scale`.
    var mantissa: Int64
    var scale: Int

    init?(_ text: String) {
        var mantissa: Int64 = 0
        var digits = 0
        var scale = 0
        var seenPoint = false
        var isNegative = false
        var isFirst = true
        var sawDigit = false
        for byte in text.utf8 {
            defer { isFirst = false }
            switch byte {
            case UInt8(ascii: "-") where isFirst: isNegative = true
            case UInt8(ascii: "."):
                guard !seenPoint else { return nil }
                seenPoint = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
                if mantissa > 0 || byte != UInt8(ascii: "0") { digits += 1 }
                guard digits <= 18 else { return nil }
                mantissa = mantissa * 10 + Int64(byte - UInt8(ascii: "0"))
                if seenPoint { scale += 1 }
            default: return nil  // an exponent, or anything else: the general path
            }
        }
        guard sawDigit, scale <= 9 else { return nil }
        self.mantissa = isNegative ? -mantissa : mantissa
        self.scale = scale
    }

    private init(mantissa: Int64, scale: Int) {
        self.mantissa = mantissa
        self.scale = scale
    }

    /// This number plus `integer`; `nil` if it does not fit.
    func adding(_ integer: Int) -> SmallDecimal? {
        var power: Int64 = 1
        for _ in 0..<scale { power *= 10 }
        let (scaled, overflow) = Int64(integer).multipliedReportingOverflow(by: power)
        guard !overflow else { return nil }
        let (sum, sumOverflow) = mantissa.addingReportingOverflow(scaled)
        guard !sumOverflow else { return nil }
        return SmallDecimal(mantissa: sum, scale: scale)
    }

    var plainText: String {
        let digits = String(mantissa.magnitude)
        let sign = mantissa < 0 ? "-" : ""
        guard scale > 0 else { return sign + digits + ".0" }
        let padded = digits.count > scale ? digits : String(repeating: "0", count: scale - digits.count + 1) + digits
        return sign + padded.dropLast(scale) + "." + padded.suffix(scale)
    }

    var double: Double? {
        Double(String(mantissa) + "e-" + String(scale))
    }
}
