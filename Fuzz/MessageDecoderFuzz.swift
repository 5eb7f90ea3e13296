// libFuzzer target for the varlink message decoder: framing, JSON parsing and
// call decoding (Protocol/FrameDecoder.swift, JSON.swift, Message.swift).
// Built and run by scripts/fuzz with `swiftc -sanitize=fuzzer,address`.
// Every input must be handled without a crash, and whatever parses must
// re-encode to JSON that parses to the same value.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var decoder = FrameDecoder(maxMessageBytes: 1 << 16)
    // Feed in two pieces, as a socket might deliver them.
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    decoder.append(bytes[..<cut])
    decoder.append(bytes[cut...])
    while true {
        let message: [UInt8]?
        do { message = try decoder.next() } catch { break }
        guard let message else { break }
        if let value = try? JSON.parse(message), value.isFinite {
            let again = try? JSON.parse(value.encoded)
            precondition(again == value, "JSON did not survive a round trip")
        }
        if let call = try? VarlinkCall.decode(message) {
            precondition(!call.method.isEmpty)
            precondition((try? VarlinkCall.decode(Array(call.encoded.dropLast())))?.method == call.method)
        }
    }
    return 0
}
