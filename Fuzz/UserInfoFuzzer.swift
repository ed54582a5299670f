import Foundation

// libFuzzer entry point: the fuzz input drives `ReliabilityTreeGenerator` (shared with the property test, in
// `Tests/NotificatableTests/ReliabilityHarness.swift`), and the tree is decoded into every reliability target.
// A crash, a hang, or a `DecodingError` whose coding path does not lead to the offending value is a finding:
// the last one is turned into a crash with `abort()` so that libFuzzer saves the input.
//
// Built by `scripts/fuzz.sh` into one module with the library's sources; see that script.

@_cdecl("LLVMFuzzerTestOneInput")
public func notificatableFuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var entropy = ReliabilityFuzzBytes(Array(UnsafeBufferPointer(start: data, count: size)))
    if let problem = ReliabilityHarness.decodeCase(&entropy, targets: Array(0..<ReliabilityTargets.count)) {
        FileHandle.standardError.write(Data("NOTIFICATABLE FUZZ FINDING: \(problem)\n".utf8))
        abort()
    }
    if let problem = ReliabilityHarness.roundTripCase(&entropy) {
        FileHandle.standardError.write(Data("NOTIFICATABLE FUZZ FINDING: \(problem)\n".utf8))
        abort()
    }
    return 0
}
