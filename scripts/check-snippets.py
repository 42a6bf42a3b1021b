#!/usr/bin/env python3
"""Compiles every Swift snippet of the user documentation against this package.

Documents: README.md, Docs/*.md and every article of the DocC catalogs (Sources/*/*.docc/**.md).
Each ```swift block is taken as written. The blocks of one document form one executable target of a
throwaway package (under .build/snippets) that depends on this one through its path:

- the `import` lines of all blocks (and of the document's context file) go to the top;
- every other line goes into one `@MainActor async throws` function (app code runs there), each block in a `do { … }` scope nested
  inside the previous one, so a block sees the names of the blocks before it and may shadow them;
- a document's context file, scripts/snippets/<slug>.swift (slug: the path with "/" → "_", without
  ".md"), declares the values the prose assumes (`let bytes: [UInt8] = placeholder()`); it is put
  first inside the function. `placeholder()` gives a value of any type: snippets are compiled, never run.

Usage: scripts/check-snippets.py   (exit 1 when a snippet does not compile, naming the document and line)
"""
import os
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
work = root / ".build" / "snippets"
fence_open = re.compile(r"^\s*```swift\s*$")
fence_close = re.compile(r"^\s*```\s*$")


def documents():
    paths = [root / "README.md"] + sorted((root / "Docs").glob("*.md"))
    paths += sorted((root / "Sources").glob("*/*.docc/**/*.md"))
    return [p for p in paths if p.is_file()]


def blocks(path):
    found, current, start = [], None, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if current is None:
            if fence_open.match(line):
                current, start = [], number + 1
        elif fence_close.match(line):
            found.append((start, current))
            current = None
        else:
            current.append(line)
    if current is not None:
        sys.exit(f"{path.relative_to(root)}:{start}: a ```swift block is never closed")
    return found


def slug(path):
    return str(path.relative_to(root).with_suffix("")).replace("/", "_").replace(".", "_")


def target_name(path):
    return "Snippets_" + re.sub(r"[^A-Za-z0-9_]", "_", slug(path))


def split_imports(lines):
    imports, body = [], []
    for line in lines:
        (imports if re.match(r"^(@\w+\s+)?import\s+\w", line.strip()) and line == line.lstrip() else body).append(line)
    return imports, body


def main_swift(path, found):
    context_file = root / "scripts" / "snippets" / (slug(path) + ".swift")
    context = context_file.read_text(encoding="utf-8").splitlines() if context_file.is_file() else []
    imports, context_body = split_imports(context)
    out_body = [f"    // context: {context_file.relative_to(root)}"] + ["    " + line for line in context_body]
    depth = 1
    for start, lines in found:
        block_imports, body = split_imports(lines)
        imports += block_imports
        out_body.append("    " * depth + f"do {{  // {path.relative_to(root)}:{start}")
        depth += 1
        # One directive per block; import lines become empty lines so that line numbers hold.
        out_body.append(f"#sourceLocation(file: \"{path.relative_to(root)}\", line: {start})")
        for line in lines:
            out_body.append("" if line in block_imports else "    " * depth + line)
        out_body.append("#sourceLocation()")
    while depth > 1:
        depth -= 1
        out_body.append("    " * depth + "}")
    header = sorted(set(line.strip() for line in imports)) + ["import Foundation"]
    return "\n".join(
        sorted(set(header))
        + [
            "",
            "/// Any value: the snippets are compiled, never run.",
            "func placeholder<T>() -> T { fatalError(\"snippets are compiled, not run\") }",
            "",
            "@MainActor func snippets() async throws {",
        ]
        + out_body
        + ["}", ""]
    )


def products():
    text = (root / "Package.swift").read_text(encoding="utf-8")
    return re.findall(r'\.library\(name: "(\w+)"', text)


def main():
    docs = [(p, blocks(p)) for p in documents()]
    docs = [(p, b) for p, b in docs if b]
    sources = work / "Sources"
    if sources.exists():
        subprocess.run(["rm", "-rf", str(sources)], check=True)
    deps = ", ".join(f'.product(name: "{name}", package: "{root.name}")' for name in products())
    targets = []
    for path, found in docs:
        name = target_name(path)
        (sources / name).mkdir(parents=True)
        (sources / name / "main.swift").write_text(main_swift(path, found), encoding="utf-8")
        targets.append(f'        .executableTarget(name: "{name}", dependencies: [{deps}]),')
    (work / "Package.swift").write_text(
        "// swift-tools-version:6.0\n// Written by scripts/check-snippets.py: the documentation's Swift snippets.\n"
        "import PackageDescription\n\nlet package = Package(\n    name: \"Snippets\",\n"
        f"    dependencies: [.package(path: \"{root}\")],\n    targets: [\n" + "\n".join(targets) + "\n    ]\n)\n",
        encoding="utf-8",
    )
    count = sum(len(b) for _, b in docs)
    print(f"check-snippets: {count} snippets in {len(docs)} documents → {work.relative_to(root)}")
    # Documentation lines such as `receipt.bundleIdentifier  // "…"` are unused expressions on purpose.
    result = subprocess.run(["swift", "build", "--package-path", str(work), "-Xswiftc", "-suppress-warnings"], cwd=root)
    if result.returncode != 0:
        print("check-snippets: a snippet does not compile (errors above name the document and line)", file=sys.stderr)
        return 1
    print(f"check-snippets: {count} snippets compile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
