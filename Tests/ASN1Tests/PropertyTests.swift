import Internals
import Testing

@testable import ASN1

/// A random ASN.1 value tree for round-trip properties.
indirect enum TestTree: Equatable {
    case integer(Int64)
    case octets([UInt8])
    case utf8(String)
    case boolean(Bool)
    case null
    case oid([UInt64])
    case sequence([TestTree])
    case tagged(UInt32, TestTree)

    static func random(depth: Int, using rng: inout SplitMix64) -> TestTree {
        let pick = rng.next() % (depth > 0 ? 8 : 6)
        switch pick {
        case 0: return .integer(Int64(bitPattern: rng.next()) >> (rng.next() % 64))
        case 1: return .octets((0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 2: return .utf8(String((0..<Int(rng.next() % 20)).map { _ in ["a", "é", "€", "😀", "Z"][Int(rng.next() % 5)] }))
        case 3: return .boolean(rng.next() % 2 == 0)
        case 4: return .null
        case 5:
            return .oid([UInt64(rng.next() % 3), rng.next() % 40] + (0..<Int(rng.next() % 6)).map { _ in rng.next() >> (rng.next() % 64) })
        case 6: return .sequence((0..<Int(rng.next() % 5)).map { _ in random(depth: depth - 1, using: &rng) })
        default: return .tagged(UInt32(rng.next() % 40), random(depth: depth - 1, using: &rng))
        }
    }

    func write(_ w: inout DERWriter) {
        switch self {
        case .integer(let v): w.appendInteger(v)
        case .octets(let b): w.appendOctetString(b)
        case .utf8(let s): w.appendUTF8String(s)
        case .boolean(let b): w.appendBoolean(b)
        case .null: w.appendNull()
        case .oid(let arcs): w.appendObjectIdentifier(ASN1ObjectIdentifier(components: arcs))
        case .sequence(let children): w.appendSequence { for c in children { c.write(&$0) } }
        case .tagged(let n, let child): w.appendConstructed(.contextSpecific(n, constructed: true)) { child.write(&$0) }
        }
    }

    static func read(_ element: ASN1Element) throws -> TestTree {
        let id = element.identifier
        if id.tagClass == .contextSpecific {
            var children = try element.children()
            let child = try read(children.readElement())
            try children.finish()
            return .tagged(id.tagNumber, child)
        }
        switch id {
        case .integer: return .integer(try element.integer(Int64.self))
        case .octetString: return .octets(Array(try element.octets()))
        case .utf8String: return .utf8(try element.utf8String())
        case .boolean: return .boolean(try element.boolean())
        case .null:
            try element.null()
            return .null
        case .objectIdentifier: return .oid(try element.objectIdentifier().components)
        case .sequence:
            var children = try element.children()
            var result: [TestTree] = []
            while !children.isAtEnd { result.append(try read(children.readElement())) }
            return .sequence(result)
        default: throw ASN1Error(code: .unexpectedTag, offset: element.offset, reason: "test tree")
        }
    }
}

@Suite struct PropertyTests {
    static func encode(_ tree: TestTree) -> [UInt8] {
        var w = DERWriter()
        tree.write(&w)
        return w.bytes
    }

    static func decode(_ bytes: [UInt8], rules: ASN1EncodingRules) throws -> TestTree {
        var reader = try ASN1Reader(bytes, rules: rules)
        let tree = try TestTree.read(reader.readElement())
        try reader.finish()
        return tree
    }

    @Test func derRoundTripAndBERAgreement() throws {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<500 {
            let tree = TestTree.random(depth: 4, using: &rng)
            let bytes = Self.encode(tree)
            #expect(try Self.decode(bytes, rules: .der) == tree)
            #expect(try Self.decode(bytes, rules: .ber) == tree)
        }
    }

    @Test func everyStrictPrefixFails() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<60 {
            let bytes = Self.encode(.sequence([TestTree.random(depth: 3, using: &rng), TestTree.random(depth: 3, using: &rng)]))
            for length in 0..<bytes.count {
                #expect(throws: ASN1Error.self) { _ = try ASN1Tree.depthFirstNodes(bytes[..<length], rules: .ber) }
            }
            _ = try ASN1Tree.depthFirstNodes(bytes[...], rules: .ber)
        }
    }

    @Test func onlyTheBERWriterWritesBERForms() throws {
        // The same two INTEGERs: sorted by the DER SET OF, in written order by the BER SET.
        var der = DERWriter()
        der.appendSetOf {
            $0.appendInteger(2)
            $0.appendInteger(1)
        }
        #expect(der.bytes == hex("31 06 02 01 01 02 01 02"))
        var ber = BERWriter()
        ber.appendUnsortedSet {
            $0.appendInteger(2)
            $0.appendInteger(1)
        }
        #expect(ber.bytes == hex("31 06 02 01 02 02 01 01"))
        // An empty segmented OCTET STRING still has one (empty) segment and its end-of-contents.
        var empty = BERWriter()
        empty.appendSegmentedOctetString([], segmentSize: 4)
        #expect(empty.bytes == hex("24 80 04 00 00 00"))
        #expect(throws: ASN1Error.self) { _ = try ASN1Tree.depthFirstNodes(empty.bytes[...], rules: .der) }
        #expect(try ASN1Tree.depthFirstNodes(empty.bytes[...], rules: .ber).count == 2)
        // The definite forms a BERWriter shares with DER write the same bytes.
        var shared = BERWriter()
        shared.appendSequence {
            $0.appendInteger(-129)
            $0.appendOctetString([1, 2])
            $0.appendSetOf { $0.appendNull() }
        }
        var same = DERWriter()
        same.appendSequence {
            $0.appendInteger(-129)
            $0.appendOctetString([1, 2])
            $0.appendSetOf { $0.appendNull() }
        }
        #expect(shared.bytes == same.bytes)
        _ = try ASN1Tree.depthFirstNodes(shared.bytes[...], rules: .der)
    }

    @Test func setOfIsSortedAndIndefiniteFormsParse() throws {
        var w = DERWriter()
        w.appendSetOf {
            $0.appendInteger(300)
            $0.appendInteger(1)
            $0.appendOctetString([9])
        }
        #expect(w.bytes == hex("31 0A 02 01 01 02 02 01 2C 04 01 09"))
        var ber = BERWriter()
        ber.appendIndefinite(.sequence) { $0.appendSegmentedOctetString(Array(0..<10), segmentSize: 3) }
        // 30 80 | 24 80 | 04 03 00 01 02 | 04 03 03 04 05 | 04 03 06 07 08 | 04 01 09 | 00 00 | 00 00
        #expect(ber.bytes == hex("30 80 24 80 04 03 00 01 02 04 03 03 04 05 04 03 06 07 08 04 01 09 00 00 00 00"))
        var reader = try ASN1Reader(ber.bytes, rules: .ber)
        var seq = try reader.readSequence()
        #expect(Array(try seq.readOctetString()) == Array(0..<10))
        #expect(throws: ASN1Error.self) { _ = try ASN1Tree.depthFirstNodes(ber.bytes[...], rules: .der) }
    }

    @Test func randomBytesNeverTrap() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<5_000 {
            let bytes = (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 7 == 0 ? 0x80 : rng.next()) }
            for rules in [ASN1EncodingRules.der, .ber] {
                _ = try? ASN1Tree.depthFirstNodes(bytes[...], rules: rules)
            }
        }
    }
}
