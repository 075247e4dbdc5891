#!/usr/bin/env python3
"""FirebaseAuth's Swift API at a commit, one declaration per line: what `import FirebaseAuth` offers
an app's Swift code (its `public` and `open` declarations, and the names its Objective-C headers give
Swift with NS_SWIFT_NAME).

    Scripts/sdk-swift-api.py GIT_DIR [COMMIT] > Tests/SDKSurface/firebaseauth-12.19-swift-api.txt
    Scripts/sdk-swift-api.py GIT_DIR COMMIT --core > Tests/SDKSurface/firebasecore-12.19-swift-api.txt
    Scripts/sdk-swift-api.py GIT_DIR COMMIT --conformances > Tests/SDKSurface/firebaseauth-12.19-conformances.txt

GIT_DIR is a clone of firebase/firebase-ios-sdk (its .git folder or a bare mirror); COMMIT defaults to
the contract's, eed63a35a90dbd46184ca1a6afeb144ee783b5fd (FirebaseAuth 12.19.0). Nothing is fetched.

Declarations marked `@available(swift 1000.0)` ("Objective-C only API") are left out: Swift cannot
call them. Each line is `Type.member(labels:)` (or `Type` for a type, `name` for a global), the names as Swift
sees them: `func f(a b: T, _ c: U)` is `f(a:_:)`, an initializer `init(x:)`, a property `name`, an enum
case `name`. Declarations under `#if` are all kept (the contract is the iOS build, whose branches are a
superset for what apps call). ModuleSurfaceTests compares the auth core's public symbols (from
swift-symbolgraph-extract) with this list.
"""
import re
import subprocess
import sys

CONTRACT = "eed63a35a90dbd46184ca1a6afeb144ee783b5fd"


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for line in text.split("\n"):
        # a // outside a string literal (good enough for declarations)
        in_string = False
        cut = len(line)
        i = 0
        while i < len(line) - 1:
            c = line[i]
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and line[i:i + 2] == "//":
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return "\n".join(out)


def labels(params):
    """`a b: T, _ c: U = x` → `a:_:`; nested parentheses and generics are skipped over."""
    depth, current, parts = 0, "", []
    for ch in params:
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    names = []
    for part in parts:
        head = part.split(":", 1)[0].strip()
        head = re.sub(r"^@\w+(\([^)]*\))?\s*", "", head)
        words = head.split()
        if not words:
            continue
        names.append(words[0] + ":")
    return "".join(names)


def balanced(text, start):
    """The text between the parenthesis at `start` and its match."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


VISIBLE = r"(?:public|open)"
TYPE = re.compile(r"\b" + VISIBLE + r"\s+(?:final\s+)?(?:class|struct|enum|protocol|actor)\s+(\w+)")
EXT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:" + VISIBLE + r"\s+)?extension\s+(\w+)")
ANY_TYPE = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|open|internal|private|fileprivate)\s+)?(?:final\s+)?(class|struct|enum|protocol|actor)\s+(?!func\b|var\b|let\b)(\w+)")
FUNC = re.compile(r"\b" + VISIBLE + r"\s+(?:(?:static|class|override|final|required|convenience|nonisolated|mutating)\s+)*func\s+([^\s(<]+)\s*(?:<[^>]*>)?\s*\(")
INIT = re.compile(r"\b" + VISIBLE + r"\s+(?:(?:override|required|convenience)\s+)*init[?!]?\s*\(")
VAR = re.compile(r"\b" + VISIBLE + r"\s+(?:(?:static|class|override|final|nonisolated|weak|lazy)\s+)*(?:private\(set\)\s+|internal\(set\)\s+|fileprivate\(set\)\s+)?(?:(?:static|class|override|final|weak)\s+)*(?:var|let)\s+(\w+)")
# A member with no access modifier (a protocol's requirement, a public extension's member).
IMPLICIT = re.compile(r"^(\s*(?:@\w+(?:\([^)]*\))?\s+)*)(?=(?:(?:static|class|mutating|nonisolated)\s+)*(?:func|var|let|init)\b)")
CASE = re.compile(r"^\s*case\s+(.+)$")
TYPEALIAS = re.compile(r"\b" + VISIBLE + r"\s+typealias\s+(\w+)")


def join_parentheses(text):
    """A declaration's parameters on one line: newlines inside parentheses become spaces. Parentheses
    inside a one-line string literal do not count (`"…link(withGameCredential"` opens none)."""
    out, depth, in_string, escaped = [], 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"' or ch == "\n":
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        out.append(" " if ch == "\n" and depth > 0 else ch)
    return "".join(out)


def declarations(text):
    text = join_parentheses(strip_comments(text))
    found = set()
    stack = []  # (name or None, visible, kind, depth at which its body opened)
    depth = 0
    pending = None  # (name, visible, kind): a type or extension whose "{" has not come yet
    objc_only = False  # `@available(swift 1000.0)` seen: the next declaration is Objective-C only
    for line in text.split("\n"):
        if "@available(swift 1000.0)" in line:
            objc_only = True
        skip = False
        if objc_only and re.search(r"\b(func|init|var|let)\b", line):
            objc_only = False
            skip = True
        # `override public init()` as `public override init()`: the access word first.
        line = re.sub(r"\b((?:override|required|convenience|final)\s+)+(public|open)\b", lambda m: m.group(2) + " " + m.group(1), line)
        named = [entry for entry in stack if entry[0] is not None]
        owner = named[-1][0] if named else None
        owner_visible = all(entry[1] for entry in named)
        kind = named[-1][2] if named else None
        m = ANY_TYPE.match(line)
        e = EXT.match(line)
        if m:
            visible = re.search(r"\b" + VISIBLE + r"\b", line[:m.start(1)]) is not None
            # A type declared without an access word in a `public extension` is public, as its other members.
            if not visible and stack and stack[-1][2] == "public extension" and stack[-1][0] == owner:
                visible = re.search(r"\b(?:internal|private|fileprivate)\b", line[:m.start(1)]) is None
            full = f"{owner}.{m.group(2)}" if owner else m.group(2)
            if visible and owner_visible:
                found.add(full)
            pending = (full, visible and owner_visible, m.group(1))
        elif e:
            # Members of a `public extension` are public without saying so.
            pending = (e.group(1), True, "public extension" if re.search(r"\bpublic\s+extension\b", line) else "extension")
        elif skip:
            pass
        elif owner is not None and owner_visible:
            if stack and stack[-1][0] == owner and stack[-1][2] in ("protocol", "public extension"):
                line = IMPLICIT.sub(lambda m: m.group(1) + "public ", line, count=1)
            f, i, v, t = FUNC.search(line), INIT.search(line), VAR.search(line), TYPEALIAS.search(line)
            if f:
                found.add(f"{owner}.{f.group(1)}({labels(balanced(line, line.index('(', f.end() - 1)))})")
            elif i:
                found.add(f"{owner}.init({labels(balanced(line, line.index('(', i.end() - 1)))})")
            elif v:
                found.add(f"{owner}.{v.group(1)}")
            elif t:
                found.add(f"{owner}.{t.group(1)}")
            elif kind == "enum" and stack and stack[-1][0] == owner and CASE.match(line):
                for case in CASE.match(line).group(1).split(","):
                    name = re.match(r"\s*`?(\w+)`?", case)
                    if name:
                        found.add(f"{owner}.{name.group(1)}")
        elif owner is None and not line.startswith((" ", "\t")):
            f, v = FUNC.search(line), VAR.search(line)
            if f:
                found.add(f"{f.group(1)}({labels(balanced(line, line.index('(', f.end() - 1)))})")
            elif v:
                found.add(v.group(1))
        for ch in line:
            if ch == "{":
                depth += 1
                if pending:
                    stack.append((pending[0], pending[1], pending[2], depth))
                    pending = None
                else:
                    stack.append((None, True, None, depth))
            elif ch == "}":
                if stack and stack[-1][3] == depth:
                    stack.pop()
                depth -= 1
    return found


# The conformances the surface test holds ours to (others, the SDK's internal protocols, are left out).
CONFORMANCES = {"NSObject", "Sendable", "NSSecureCoding", "NSCopying", "Error", "Hashable", "Equatable", "AsyncSequence",
                "AsyncIteratorProtocol"}
CLAUSE = re.compile(r"\b(class|struct|enum|protocol|actor|extension)\s+([\w.]+)\s*(?:<[^>{]*>)?\s*:\s*([^{]+?)\s*(?:where\b[^{]*)?\{", re.S)


def conformances(text, public_types):
    """`Type: Protocol` for each conformance (or superclass) in CONFORMANCES that a public type
    declares, in its declaration or in an extension; `@unchecked Sendable` is Sendable; an
    extension marked `@available(*, unavailable)` declares none (the SDK's way to say "not Sendable")."""
    text = strip_comments(text)
    by_last = {}
    for name in public_types:
        by_last.setdefault(name.split(".")[-1], []).append(name)
    found = set()
    last = None  # the type last resolved: a nested type with a common name (Iterator) is its member
    for m in CLAUSE.finditer(text):
        before = text[max(0, m.start() - 60):m.start()]
        if m.group(1) == "extension" and "@available(*, unavailable)" in before:
            continue
        names = [m.group(2)] if m.group(2) in public_types else by_last.get(m.group(2).split(".")[-1], [])
        if len(names) > 1 and last:
            names = [name for name in names if name == f"{last}.{m.group(2)}"]
        if len(names) != 1:
            continue
        if m.group(1) != "extension":
            last = names[0]
        for word in m.group(3).split(","):
            word = re.sub(r"@\w+\s*", "", word).strip().split(".")[-1]
            if word in CONFORMANCES:
                found.add(f"{names[0]}: {word}")
    return found


def header_names(text):
    """NS_SWIFT_NAME(Name) on typedefs and constants of the public headers."""
    return set(re.findall(r"NS_SWIFT_NAME\(\s*(\w+)\s*\)", text))


def objc_swift_names(text):
    """FirebaseCore's Swift API from its Objective-C headers: each @interface's NS_SWIFT_NAME, its
    properties (a `getter=isX` BOOL is `isX`), its methods (NS_SWIFT_NAME, or the importer's rule for
    the few without: `initWithX:y:` is `init(x:y:)`, the class's own name leaves a method's first
    piece, `deleteApp:` → `delete(_:)`, and a last `completion` block also gives the async form),
    NS_ENUM cases (the type's prefix off, lower-cased) and NS_SWIFT_NAME'd functions. NS_UNAVAILABLE
    is left out."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    names = set()
    # An enum: typedef NS_ENUM(NSInteger, FIRLoggerLevel) { FIRLoggerLevelError = 3, … } NS_SWIFT_NAME(FirebaseLoggerLevel);
    for objc, body, swift in re.findall(r"typedef\s+NS_ENUM\([^,]+,\s*(\w+)\)\s*\{(.*?)\}\s*NS_SWIFT_NAME\((\w+)\)", text, flags=re.S):
        names.add(swift)
        for case in re.findall(r"\b" + objc + r"(\w+)\s*=", body):
            names.add(f"{swift}.{case[0].lower()}{case[1:]}")
    # C functions, the name before or after: NS_SWIFT_NAME(FirebaseVersion()) NSString* FIRFirebaseVersion(void);
    for function in re.findall(r"NS_SWIFT_NAME\((\w+\(\))\)\s*\w+\s*\*?\s*\w+\s*\(void\)", text):
        names.add(function)
    for function in re.findall(r"\w+\s*\(void\)\s*NS_SWIFT_NAME\((\w+\(\))\)", text):
        names.add(function)
    for swift, objc, body in re.findall(r"NS_SWIFT_NAME\((\w+)\)\s*@interface\s+(\w+)\s*:[^\n]*\n(.*?)@end", text, flags=re.S):
        names.add(swift)
        own = re.sub(r"^FIR", "", objc)  # App, Options, Configuration
        declarations = re.split(r";", body)
        for declaration in declarations:
            line = " ".join(declaration.split())
            if not line or "NS_UNAVAILABLE" in line:
                continue
            override = re.search(r"NS_SWIFT_NAME\(([^)]*\)?)\)", line)
            if line.startswith("@property"):
                getter = re.search(r"getter=(\w+)", line)
                name = override.group(1) if override else (getter.group(1) if getter else re.findall(r"\*?\s*(\w+)\s*(?:NS_\w+(?:\([^)]*\))?\s*)*$", line)[0])
                names.add(f"{swift}.{name}")
            elif line.startswith(("-", "+")):
                if override:
                    names.add(f"{swift}.{override.group(1)}")
                    continue
                selector = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", "", line[1:])  # drop the types
                selector = re.sub(r"\bNS_\w+(\([^)]*\))?", "", selector)
                pieces = re.findall(r"(\w+)\s*:", selector)
                if not pieces:  # no arguments: - (NSDate *)dateValue; + (instancetype)timestamp is init()
                    word = selector.split()[0]
                    factory_alone = line.startswith("+") and "instancetype" in line and word == own[0].lower() + own[1:]
                    names.add(f"{swift}.init()" if factory_alone else f"{swift}.{word}()")
                    continue
                first = pieces[0]
                factory = own[0].lower() + own[1:] + "With"  # + timestampWithSeconds: is an initializer in Swift
                if line.startswith("+") and "instancetype" in line and first.startswith(factory):
                    first = "initWith" + first[len(factory):]
                if first.startswith("initWith"):
                    label = first[len("initWith"):]
                    labels = [label[0].lower() + label[1:]] + pieces[1:]
                    names.add(f"{swift}.init({''.join(l + ':' for l in labels)})")
                    continue
                base = first[:-len(own)] if first.endswith(own) and first != own else first
                names.add(f"{swift}.{base}({''.join(['_:'] + [p + ':' for p in pieces[1:]])})")
                if re.search(r"\(\^\)\s*\([^)]*\)\)\s*completion\s*$", line) or pieces[-1] == "completion" or (len(pieces) == 1 and "(^" in line):
                    names.add(f"{swift}.{base}({''.join(p + ':' for p in pieces[1:-1])})")
    return names


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    git_dir = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else CONTRACT
    files = git(git_dir, "ls-tree", "-r", "--name-only", commit, "FirebaseAuth/Sources").split()
    names = set()
    for path in files:
        if path.startswith("FirebaseAuth/Sources/Swift/") and path.endswith(".swift"):
            names |= declarations(git(git_dir, "show", f"{commit}:{path}"))
        elif path.startswith("FirebaseAuth/Sources/Public/") and path.endswith(".h"):
            names |= header_names(git(git_dir, "show", f"{commit}:{path}"))
    if len(sys.argv) > 3 and sys.argv[3] == "--conformances":
        types = {name for name in names if "(" not in name and name[:1].isupper()}
        found = set()
        for path in files:
            if path.startswith("FirebaseAuth/Sources/Swift/") and path.endswith(".swift"):
                found |= conformances(git(git_dir, "show", f"{commit}:{path}"), types)
        print(f"# FirebaseAuth's public types' conformances at firebase/firebase-ios-sdk {commit}")
        print("# made by Scripts/sdk-swift-api.py GIT_DIR COMMIT --conformances; `Type: Protocol` (or superclass), of " + ", ".join(sorted(CONFORMANCES)))
        for line in sorted(found):
            print(line)
        return
    if len(sys.argv) > 3 and sys.argv[3] == "--core":
        names = set()
        for path in git(git_dir, "ls-tree", "-r", "--name-only", commit, "FirebaseCore/Sources/Public/FirebaseCore").split():
            if path.endswith(".h"):
                names |= objc_swift_names(git(git_dir, "show", f"{commit}:{path}"))
        print(f"# FirebaseCore Swift API (from its Objective-C headers) at firebase/firebase-ios-sdk {commit}")
        print("# made by Scripts/sdk-swift-api.py GIT_DIR COMMIT --core; one declaration per line (Type.member(labels:))")
    else:
        print(f"# FirebaseAuth Swift API at firebase/firebase-ios-sdk {commit}")
        print("# made by Scripts/sdk-swift-api.py; one declaration per line (Type.member(labels:))")
    for name in sorted(names):
        print(name)


if __name__ == "__main__":
    main()
