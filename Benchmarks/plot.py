#!/usr/bin/env python3
"""Draws the growth tables of a Benchmarks/run.sh output as an SVG (no plotting library needed).

usage: Benchmarks/run.sh growth | tee run.md;  Benchmarks/plot.py run.md Benchmarks/growth.svg
Left: seconds and peak memory against pushes through push-receiver; right: the same for sign-ins.
Both axes logarithmic: linear cost is a straight line of slope 1, flat memory a horizontal line.
"""
import math
import sys


def tables(text):
    """The growth section's two tables: rows of pushes and rows of flows."""
    pushes, flows = [], []
    section = text.split("### Growth", 1)[-1]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit():
            pushes.append((int(cells[0]), float(cells[1]), float(cells[3])))
        elif len(cells) == 9 and cells[1].isdigit():
            flows.append((int(cells[1]), float(cells[2]), float(cells[6])))
    return pushes, flows


def panel(rows, x0, title, unit):
    width, height, left, bottom = 360, 260, 60, 40
    out = [f'<text x="{x0 + left}" y="20" font-size="14" font-weight="bold">{title}</text>']
    if not rows:
        return out
    xs = [math.log10(r[0]) for r in rows]
    lo_x, hi_x = math.floor(min(xs)), math.ceil(max(xs))
    values = [r[1] for r in rows] + [r[2] for r in rows]
    lo_y = math.floor(math.log10(max(min(values), 1e-3)))
    hi_y = math.ceil(math.log10(max(values)))
    hi_x = max(hi_x, lo_x + 1)
    hi_y = max(hi_y, lo_y + 1)

    def px(v):
        return x0 + left + (math.log10(v) - lo_x) / (hi_x - lo_x) * width

    def py(v):
        return 30 + height - (math.log10(max(v, 1e-3)) - lo_y) / (hi_y - lo_y) * height

    out.append(f'<rect x="{x0 + left}" y="30" width="{width}" height="{height}" fill="none" stroke="#999"/>')
    for e in range(lo_x, hi_x + 1):
        x = px(10 ** e)
        out.append(f'<line x1="{x}" y1="30" x2="{x}" y2="{30 + height}" stroke="#eee"/>')
        out.append(f'<text x="{x}" y="{30 + height + 16}" font-size="11" text-anchor="middle">{10 ** e:,}</text>')
    for e in range(lo_y, hi_y + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{x0 + left}" y1="{y}" x2="{x0 + left + width}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{x0 + left - 6}" y="{y + 4}" font-size="11" text-anchor="end">{10 ** e:g}</text>')
    out.append(f'<text x="{x0 + left + width / 2}" y="{30 + height + bottom - 4}" font-size="12" text-anchor="middle">{unit} (log)</text>')
    for index, colour, label in ((1, "#1f77b4", "wall seconds"), (2, "#d62728", "peak RSS MB")):
        points = " ".join(f"{px(r[0]):.1f},{py(r[index]):.1f}" for r in rows)
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r in rows:
            out.append(f'<circle cx="{px(r[0]):.1f}" cy="{py(r[index]):.1f}" r="3" fill="{colour}"/>')
        ly = 44 + 16 * (index - 1)
        out.append(f'<text x="{x0 + left + 8}" y="{ly}" font-size="12" fill="{colour}">{label}</text>')
    return out


def main():
    source, target = sys.argv[1], sys.argv[2]
    pushes, flows = tables(open(source).read())
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="920" height="340" font-family="sans-serif">',
             '<rect width="100%" height="100%" fill="white"/>']
    parts += panel(pushes, 0, "pushes through push-receiver", "pushes")
    parts += panel(flows, 440, "phone sign-ins (1,000 in flight)", "sign-ins")
    parts.append("</svg>")
    open(target, "w").write("\n".join(parts) + "\n")
    print(f"{target}: {len(pushes)} push sizes, {len(flows)} flow sizes")


main()
