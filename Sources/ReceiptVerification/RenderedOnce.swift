import Internals

/// A value made the first time it is read, then kept: the certificate names in verdict reasons
/// (the signer's label, the chain summary, the anchors' subjects), which OpenSSL renders
/// (`d2i_X509_NAME`) at a cost a first verification would otherwise pay whether or not anyone
/// reads the reason. Each reading gives the same value.
final class RenderedOnce<Value: Sendable>: Sendable {
    private let render: @Sendable () -> Value
    private let rendered = Locked<Value?>(nil)

    init(_ render: @escaping @Sendable () -> Value) {
        self.render = render
    }

    /// The value, made now if no one has read it before.
    var value: Value {
        rendered.withLock { rendered in
            if let rendered { return rendered }
            let made = render()
            rendered = made
            return made
        }
    }
}
