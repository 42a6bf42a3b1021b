import JSON

/// A model's fields as a decoder reads them, made once per model from its field enumeration: the
/// fields in declaration order (a field's position is its slot in ``PayloadFields`` and its bit in
/// ``ObjectState/seen``), and their JSON names grouped by length for ``slot(for:)``.
///
/// One lookup for every model, in place of a hand-written switch per model: a key is compared
/// only with the names of its length, each first by two 8-byte words (which cover the whole name
/// up to 16 bytes) and, for longer names, then a word at a time.
final class PayloadFieldTable<Field: PayloadField>: @unchecked Sendable {
    // @unchecked: the buffers are written only in init and freed in deinit.
    /// The fields in declaration order: `fields[slot]` is the field at that slot.
    let fields: [Field]
    /// One name of the table: its words (see ``words(_:)``), its slot, and where its bytes start
    /// in ``names``.
    private struct Entry {
        var head: UInt64
        var tail: UInt64
        var slot: Int
        var offset: Int
    }
    /// The entries, sorted by name length (a buffer of its own: read without bounds checks, at
    /// indices from ``firstEntry``).
    private let entries: UnsafeMutableBufferPointer<Entry>
    /// The entries of names `length` bytes long are `entries[firstEntry[length]..<firstEntry[length + 1]]`,
    /// for `length` up to the longest name's; one more element than that.
    private let firstEntry: UnsafeMutableBufferPointer<Int>
    /// Every name's UTF-8 bytes, one after the other (``Entry/offset``).
    private let names: [UInt8]
    /// For each kind of `AppStorePayloadKind.walkTables`, in its order: a bit per slot whose name
    /// is one of the kind's foreign members, and one per slot whose name it requires.
    let kindMasks: [(foreign: UInt64, required: UInt64)]

    /// The table of `Field`'s cases.
    init() {
        let fields = Array(Field.allCases)
        // The slots are the bits of ObjectState.seen: a model has at most 64 fields (a fact of
        // the package's own declarations, not of any input).
        precondition(fields.count <= 64, "a payload model declares more than 64 fields")
        var names: [UInt8] = []
        var unsorted: [(length: Int, entry: Entry)] = []
        for (slot, field) in fields.enumerated() {
            let bytes = Array(field.rawValue.utf8)
            let (head, tail) = bytes.withUnsafeBufferPointer { Self.words($0) }
            unsorted.append((bytes.count, Entry(head: head, tail: tail, slot: slot, offset: names.count)))
            names += bytes
        }
        let sorted = unsorted.sorted { $0.length < $1.length }
        let longest = sorted.last?.length ?? 0
        var firstEntry = [Int](repeating: 0, count: longest + 2)
        for length in 0...(longest + 1) {
            firstEntry[length] = sorted.firstIndex { $0.length >= length } ?? sorted.count
        }
        self.fields = fields
        self.entries = .allocate(capacity: sorted.count)
        _ = self.entries.initialize(from: sorted.map(\.entry))
        self.firstEntry = .allocate(capacity: firstEntry.count)
        _ = self.firstEntry.initialize(from: firstEntry)
        self.names = names
        kindMasks = AppStorePayloadKind.walkTables.map { tables in
            var masks: (foreign: UInt64, required: UInt64) = (0, 0)
            for (slot, field) in fields.enumerated() {
                let bit: UInt64 = 1 << UInt64(slot)
                if tables.foreign.contains(field.rawValue) { masks.foreign |= bit }
                if tables.required.contains(field.rawValue) { masks.required |= bit }
            }
            return masks
        }
    }

    deinit {
        entries.deallocate()
        firstEntry.deallocate()
    }

    /// The slot of the field named exactly `key`, if any.
    @inline(__always)
    func slot(for key: JSONKey) -> Int? {
        if let bytes = key.bytesInDocument { return slot(forName: bytes) }
        return key.withBytes { slot(forName: $0) }
    }

    /// The slot of the field named exactly by the UTF-8 `bytes`, if any.
    func slot(forName bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let length = bytes.count
        guard length + 1 < firstEntry.count, let first = firstEntry.baseAddress, let entries = entries.baseAddress else { return nil }
        var index = first[length]
        let end = first[length + 1]
        guard index < end else { return nil }
        let (head, tail) = Self.words(bytes)
        while index < end {
            let entry = entries[index]
            index += 1
            guard entry.head == head, entry.tail == tail else { continue }
            // The words cover names of up to 16 bytes; compare the middle of longer ones.
            if length <= 16 { return entry.slot }
            if Self.middlesEqual(bytes, names, at: entry.offset) { return entry.slot }
        }
        return nil
    }

    /// The slot of `field`: its position among the cases.
    @inline(__always)
    func slot(of field: Field) -> Int {
        // A case of an enumeration without payloads is stored as its position (the Swift ABI's
        // layout of such enumerations); checked against the table, with a search as the fallback.
        let tag = withUnsafeBytes(of: field) { $0.count == 1 ? Int($0[0]) : -1 }
        if tag >= 0 && tag < fields.count && fields[tag] == field { return tag }
        return fields.firstIndex(of: field) ?? 0
    }

    /// Whether the bytes of `key` (longer than 16) from the 8th to the 8th last are those of the
    /// name of the same length at `offset` in `names`, compared a word at a time.
    private static func middlesEqual(_ key: UnsafeBufferPointer<UInt8>, _ names: [UInt8], at offset: Int) -> Bool {
        let length = key.count
        guard offset >= 0, offset + length <= names.count, let keyBase = key.baseAddress else { return false }
        return names.withUnsafeBufferPointer { names in
            guard let nameBase = names.baseAddress else { return false }
            let keyWords = UnsafeRawPointer(keyBase)
            let nameWords = UnsafeRawPointer(nameBase + offset)
            var position = 8
            while position < length - 8 {
                // The word at `position`, moved back so that it ends before the last 8 bytes.
                let at = min(position, length - 16)
                let keyWord = keyWords.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                guard keyWord == nameWords.loadUnaligned(fromByteOffset: at, as: UInt64.self) else { return false }
                position += 8
            }
            return true
        }
    }

    /// Two words that together hold the bytes of a name: for up to 8 bytes the bytes themselves
    /// (and 0); for longer names the first 8 and the last 8 bytes (overlapping up to 16 bytes).
    @inline(__always)
    private static func words(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return (0, 0) }
        let raw = UnsafeRawPointer(base)
        if count >= 8 {
            return (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        }
        if count >= 4 {
            let low = UInt64(raw.loadUnaligned(as: UInt32.self))
            let high = UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            return (low | high << 32, 0)
        }
        var word: UInt64 = 0
        for index in 0..<count { word |= UInt64(bytes[index]) << UInt64(8 * index) }
        return (word, 0)
    }
}
