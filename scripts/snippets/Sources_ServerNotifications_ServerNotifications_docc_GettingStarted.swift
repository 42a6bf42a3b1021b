// Values the article assumes: the body of the HTTP POST Apple sent.
let requestBody: [UInt8] = placeholder()
