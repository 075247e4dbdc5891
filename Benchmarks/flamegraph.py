#!/usr/bin/env python3
"""A flame graph (SVG) of a `perf record -g` profile, with Swift's symbols demangled.

    perf record -e cpu-clock -F 999 -g -o run.perf -- .build/release/authsim bench flows
    perf script -i run.perf | Benchmarks/flamegraph.py "10,000 silent-push sign-ins" > flows.svg

A memory profile too: heaptrack's folded stacks at the heap's peak (each line `root;…;leaf bytes`),
with --folded:

    heaptrack -o run /work/main/.build/release/authsim bench flows --count 3000
    heaptrack_print -f run.zst --flamegraph-cost-type peak -F peak.folded
    Benchmarks/flamegraph.py --folded "3,000 sign-ins at once" < peak.folded > memory.svg

Each box is a function; its width is its share of the samples in it and in what it called; the
bottom row is the thread (NIO's event loops, Swift's cooperative pool, the kernel's). Hover a box
for its full name and share. Frames the unwinder could not name are `[unknown]`; a stack that
stops early means a frame without a frame pointer (libc, the kernel's entry).
"""
import collections
import html
import re
import subprocess
import sys

WIDTH, ROW, MIN_PX = 1600, 17, 1.0


def stacks(lines):
    """(thread, [frames root first]) per sample of `perf script` output."""
    thread, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if thread is not None:
                yield thread, list(reversed(frames))
            thread, frames = None, []
        elif not line.startswith(("\t", " ")):
            thread = re.sub(r"[-#]?\d+$", "", line.split()[0]) or line.split()[0]
        else:
            parts = line.strip().split(" ", 1)
            symbol = parts[1] if len(parts) > 1 else parts[0]
            symbol = re.sub(r"\+0x[0-9a-f]+ ", " ", symbol)
            name, _, dso = symbol.rpartition(" (")
            name = name or symbol
            if name == "[unknown]" and dso.startswith("[unknown]"):
                continue
            frames.append(name)
    if thread is not None:
        yield thread, list(reversed(frames))


def demangled(names):
    """Swift's names, readable (`swift demangle --simplified`), others as they are."""
    mangled = sorted(n for n in names if n.startswith(("$s", "_$s")))
    if not mangled:
        return {}
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(mangled),
                             capture_output=True, text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {m: (d or m) for m, d in zip(mangled, out)}


def folded_stacks(lines):
    """(frames root first, bytes) per line of heaptrack's folded output."""
    for line in lines:
        frames, _, cost = line.rstrip("\n").rpartition(" ")
        if frames and cost.isdigit():
            yield tuple(f for f in frames.rstrip(";").split(";") if f), int(cost)


def main():
    args = sys.argv[1:]
    memory = bool(args) and args[0] == "--folded"
    if memory:
        args = args[1:]
    title = args[0] if args else "profile"
    folded = collections.Counter()
    if memory:
        for frames, cost in folded_stacks(sys.stdin):
            folded[frames] += cost
    else:
        for thread, frames in stacks(sys.stdin):
            folded[(thread,) + tuple(frames)] += 1
    names = demangled({f for stack in folded for f in stack})
    root = {"children": {}, "count": 0}
    for stack, count in folded.items():
        node = root
        root["count"] += count
        for frame in stack:
            node = node["children"].setdefault(names.get(frame, frame), {"children": {}, "count": 0})
            node["count"] += count
    total = max(root["count"], 1)
    depth = [0]
    boxes = []

    def walk(node, x, level):
        depth[0] = max(depth[0], level)
        for name, child in sorted(node["children"].items()):
            w = child["count"] / total * WIDTH
            if w >= MIN_PX:
                boxes.append((x, level, w, name, child["count"]))
                walk(child, x, level + 1)
            x += w

    walk(root, 0.0, 0)
    height = (depth[0] + 1) * ROW + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#fdfdf8"/>',
           f'<text x="8" y="20" font-size="15">{html.escape(title)}: '
           + (f"{total / 1e6:.1f} MB on the heap at its peak (heaptrack)" if memory else f"{total} samples (perf record -e cpu-clock)")
           + '</text>']
    for x, level, w, name, count in boxes:
        y = height - (level + 1) * ROW - 4
        hue = 10 + (hash(name) % 45)
        share = f"{count / total * 100:.2f}%"
        label = name if len(name) * 6.6 < w - 4 else name[: max(int((w - 4) / 6.6) - 1, 0)] + ("…" if w > 20 else "")
        amount = f"{count / 1e3:.0f} KB" if memory else f"{count} samples"
        out.append(f'<g><title>{html.escape(name)} ({amount}, {share})</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{max(w - 0.5, 0.1):.1f}" height="{ROW - 1}" fill="hsl({hue},85%,60%)"/>'
                   + (f'<text x="{x + 2:.1f}" y="{y + ROW - 5}">{html.escape(label)}</text>' if w > 20 else "") + "</g>")
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
