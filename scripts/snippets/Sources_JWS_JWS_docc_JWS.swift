// Values the article assumes.
let tokenText: String = placeholder()
