"""The speedrun's report: time and tokens to the target validation loss, the
curve as JSON Lines and as an SVG beside other runs (the baseline).

    python3 bench/speedrun_report.py --target 1.47 --out DIR [--marker LABEL=MINUTES:LOSS ...] RUN_DIR [OTHER_DIR ...]

Each RUN_DIR holds a run's metrics.jsonl (its evaluation lines carry elapsed_s,
the wall time since the run began, evaluations included) and train.log (the
train command's output, whose "training:" line gives the tokens per step). The
first run is the one reported; it writes DIR/curve.jsonl (one line per
evaluation: step, tokens, minutes, val loss) and DIR/curve.svg (val loss against
wall-clock minutes for every run given, the target as a dashed line, and each
--marker as a labelled point: a baseline too long to run, at its measured ms/step
times its steps; with markers the minutes axis is logarithmic).
"""
import argparse
import json
import math
import os
import re
import sys

COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"]


def read_run(folder):
    log = open(os.path.join(folder, "train.log"), encoding="utf-8", errors="replace").read()
    match = re.search(r"= (\d+) tokens, lr", log)
    if not match:
        sys.exit(f"speedrun_report: {folder}/train.log has no 'training: ... = N tokens' line")
    tokens_per_step = int(match.group(1))
    points = []
    for line in open(os.path.join(folder, "metrics.jsonl"), encoding="utf-8"):
        record = json.loads(line)
        if record.get("eval") and "elapsed_s" in record:
            points.append({"step": record["iter"], "tokens": record["iter"] * tokens_per_step,
                           "minutes": record["elapsed_s"] / 60, "val_loss": record["val_loss"]})
    # A resumed run restarts its clock: its sessions' minutes add up.
    offset, previous = 0.0, None
    for point in points:
        if previous is not None and point["minutes"] + offset < previous:
            offset = previous
        point["minutes"] += offset
        previous = point["minutes"]
    name = os.path.basename(os.path.normpath(folder))
    return {"name": name, "tokens_per_step": tokens_per_step, "points": points}


def crossing(run, target):
    for point in run["points"]:
        if point["val_loss"] <= target:
            return point
    return None


def svg(runs, markers, target, path):
    width, height, left, right, top, bottom = 720, 420, 60, 20, 20, 50
    # Step 0's point (the untrained model's loss) is left out of the axes unless it is all there is.
    every_point = [p for run in runs for p in run["points"]]
    all_points = [p for p in every_point if p["step"] > 0] or every_point
    minutes = [p["minutes"] for p in all_points if p["minutes"] > 0] + [m["minutes"] for m in markers] or [1.0]
    # Markers (a baseline's projected time) can lie hours beyond the runs: then the axis is logarithmic.
    logarithmic = bool(markers)
    if logarithmic:
        x_min = 10 ** math.floor(math.log10(min(minutes)))
        x_max = 10 ** math.ceil(math.log10(max(minutes)))
        ticks = [m * 10 ** e for e in range(round(math.log10(x_min)), round(math.log10(x_max)) + 1) for m in (1, 2, 5)
                 if x_min <= m * 10 ** e <= x_max]
    else:
        x_min, x_max = 0.0, max(minutes) * 1.05 or 1
        ticks = [x_max * tick / 5 for tick in range(6)]
    losses = [p["val_loss"] for p in all_points] + [m["val_loss"] for m in markers] or [target]
    y_min, y_max = min(min(losses), target) - 0.05, min(max(losses), 3.0) + 0.05

    def x(value):
        if logarithmic:
            fraction = (math.log10(value) - math.log10(x_min)) / (math.log10(x_max) - math.log10(x_min))
        else:
            fraction = value / x_max
        return left + (width - left - right) * fraction

    def y(value):
        value = min(max(value, y_min), y_max)
        return top + (height - top - bottom) * (y_max - value) / (y_max - y_min)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="12"><rect width="100%" height="100%" fill="white"/>']
    for tick in range(6):
        value = y_min + (y_max - y_min) * tick / 5
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.2f}</text>')
    for tick in ticks:
        parts.append(f'<text x="{x(tick):.1f}" y="{height - bottom + 16}" text-anchor="middle">{tick:g}</text>')
    scale = ", logarithmic" if logarithmic else ""
    parts.append(f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">wall-clock minutes '
                 f'(evaluations included{scale})</text>')
    parts.append(f'<text x="14" y="{(top + height - bottom) / 2}" transform="rotate(-90 14 {(top + height - bottom) / 2})" '
                 f'text-anchor="middle">validation loss</text>')
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(target):.1f}" y2="{y(target):.1f}" stroke="black" '
                 f'stroke-dasharray="6 4"/><text x="{width - right - 4}" y="{y(target) - 5:.1f}" text-anchor="end">'
                 f'target {target}</text>')
    for index, run in enumerate(runs):
        colour = COLOURS[index % len(COLOURS)]
        line = " ".join(f"{x(p['minutes']):.1f},{y(p['val_loss']):.1f}" for p in run["points"] if p["step"] > 0)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left + 10}" y="{top + 16 + 16 * index}" fill="{colour}">{run["name"]}</text>')
    # Each marker's label on its own row above it, joined to it by a dotted line.
    for index, marker in enumerate(markers):
        mx, my = x(marker["minutes"]), y(marker["val_loss"])
        label_y = top + 16 + 18 * index
        parts.append(f'<circle cx="{mx:.1f}" cy="{my:.1f}" r="5" fill="none" stroke="black" stroke-width="2"/>'
                     f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{label_y + 4}" y2="{my - 6:.1f}" stroke="black" '
                     f'stroke-dasharray="2 3"/><text x="{mx - 4:.1f}" y="{label_y}" text-anchor="end">'
                     f'{marker["label"]}</text>')
    parts.append("</svg>")
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        out.write("\n".join(parts) + "\n")
    os.replace(path + ".tmp", path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", type=float, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--marker", action="append", default=[], metavar="LABEL=MINUTES:LOSS",
                        help="a point drawn on the curve, such as a baseline's projected time to its loss")
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    markers = []
    for text in args.marker:
        match = re.fullmatch(r"(.+)=([0-9.]+):([0-9.]+)", text)
        if not match:
            sys.exit(f"speedrun_report: --marker '{text}' is not LABEL=MINUTES:LOSS")
        markers.append({"label": match.group(1), "minutes": float(match.group(2)), "val_loss": float(match.group(3))})
    runs = [read_run(folder) for folder in args.runs]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "curve.jsonl"), "w", encoding="utf-8") as out:
        for point in runs[0]["points"]:
            out.write(json.dumps(point) + "\n")
    svg(runs, markers, args.target, os.path.join(args.out, "curve.svg"))
    for run in runs:
        point = crossing(run, args.target)
        last = run["points"][-1] if run["points"] else None
        if point:
            print(f"{run['name']}: val {point['val_loss']:.4f} <= {args.target} at step {point['step']}: "
                  f"{point['minutes']:.1f} minutes, {point['tokens'] / 1e6:.1f}M tokens")
        elif last:
            print(f"{run['name']}: target {args.target} not reached; last val {last['val_loss']:.4f} at step "
                  f"{last['step']}, {last['minutes']:.1f} minutes, {last['tokens'] / 1e6:.1f}M tokens")
    print(f"curve: {os.path.join(args.out, 'curve.jsonl')}, {os.path.join(args.out, 'curve.svg')}")


if __name__ == "__main__":
    main()
