#!/usr/bin/env python3
"""Prints the command SwiftPM links an executable with, read from its build manifest.

usage: Scripts/swiftpm-link-command.py MANIFEST BINARY [OUTPUT]

MANIFEST is the llbuild manifest `swift build` wrote (.build/debug.yaml), BINARY the executable it
links (`swift build --show-bin-path`/authsim). The command's arguments are printed NUL-separated
(for bash's `mapfile -d ''`), with `-o BINARY` made `-o OUTPUT` when OUTPUT is given.

Scripts/release.sh --debug links the debug build's objects again with the standard library static
from this command, rather than with `swift build --static-swift-stdlib`: that changes SwiftPM's build
parameters, so it plans the build again, relinks .build's own binary, and the next `swift build`
plans and links it back (about 50 s here, where this link takes 5).

The manifest is SwiftPM's own file, not an interface: each command is a block
    "C.<name>":
      tool: shell
      inputs: [JSON strings]
      outputs: [JSON strings]
      args: [JSON strings]
Exit 1 with a message when no command's only output is BINARY, or when two are.
"""

import json
import re
import sys


def link_command(manifest: str, binary: str) -> list[str]:
    found = []
    for block in re.split(r"\n  (?=\")", manifest):
        outputs = re.search(r"\n    outputs: (\[.*\])\n", block)
        arguments = re.search(r"\n    args: (\[.*\])\n", block)
        if outputs and arguments and json.loads(outputs.group(1)) == [binary]:
            found.append(json.loads(arguments.group(1)))
    if len(found) != 1:
        raise LookupError(f"{len(found)} commands in the manifest make {binary} (one expected)")
    command = found[0]
    if "-o" not in command or command[command.index("-o") + 1] != binary:
        raise LookupError(f"the command that makes {binary} does not name it after -o")
    return command


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    manifest_path, binary = argv[1], argv[2]
    try:
        with open(manifest_path, encoding="utf-8") as manifest:
            command = link_command(manifest.read(), binary)
    except (OSError, LookupError, ValueError) as error:
        print(f"swiftpm-link-command.py: {manifest_path}: {error}", file=sys.stderr)
        return 1
    if len(argv) == 4:
        command[command.index("-o") + 1] = argv[3]
    sys.stdout.write("\0".join(command))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
