"""Compares the runs of suite.py that run_suite.sh left in OUTDIR: for each library, a markdown
table of its ops with
  - unhooked ms, hooked ms: the median over the rounds (LIB.unhooked.R.jsonl, LIB.hooked.R.jsonl)
    of each round's median run;
  - hooked x: unhooked / hooked (above 1, the hooked run is faster), in bold below 0.97;
  - max diff: max over the sample of |hooked - unhooked| / max(|unhooked| over the sample), from the
    first round of each;
  - residual unhooked, residual hooked: from the first round of each;
  - tiers, actions: counts over the interposer's log lines (LIB.hooked.jsonl) that the first hooked
    round attributes to the op, the actions followed by the schemes of its "emugemm" lines;
and a table of the queued-work probes (the host µs of `c = a @ b` behind queued work, unhooked and
hooked; a difference above 20 µs in bold), a summary line, the ops that failed and the runs that
failed (OUTDIR/failed.txt). Prints the tables and writes them to OUTDIR/summary.md. Needs only the
standard library.

usage: python3 suite_report.py OUTDIR"""
import json
import math
import os
import statistics
import sys
from collections import Counter

LIBRARIES = ("torch", "cupy")
ROUNDS = (1, 2)
# a hooked op slower than this fraction of its unhooked time is marked
SLOWER = 0.97
# a probe whose hooked call holds the host longer than this beyond the unhooked one is marked
PROBE_SLACK_US = 20.0


def read_rows(path):
    """the op lines of one run of suite.py, by op name (in their order); none where it is missing"""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            # a library may print lines of its own to standard output
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "op" in row:
                rows[row["op"]] = row
    return rows


def read_log(path):
    """the interposer's log, one parsed object per line (None for a line that is not one)"""
    if not os.path.exists(path):
        return []
    entries = []
    with open(path, errors="replace") as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            entries.append(entry if isinstance(entry, dict) else None)
    return entries


def first(rounds, op, key):
    """the value of key in the first round where the op has one"""
    for rows in rounds:
        value = rows.get(op, {}).get(key)
        if value is not None:
            return value
    return None


def median(rounds, op, key):
    values = [rows[op][key] for rows in rounds if rows.get(op, {}).get(key) is not None]
    return statistics.median(values) if values else None


def max_diff(unhooked, hooked):
    """max |hooked - unhooked| / max |unhooked| over two samples of [re, im] pairs"""
    if not unhooked or not hooked or len(unhooked) != len(hooked):
        return None
    scale = max(max(math.hypot(*u) for u in unhooked), sys.float_info.min)
    return max(math.hypot(h[0] - u[0], h[1] - u[1]) for u, h in zip(unhooked, hooked)) / scale


def field(entry, key):
    """key of a log line, at its top level or in its report object"""
    if entry.get(key) is not None:
        return entry[key]
    report = entry.get("report")
    return report.get(key) if isinstance(report, dict) else None


def counts(counter):
    """"a 3, b 1": the most frequent first"""
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def log_counts(log, span):
    """(tiers, actions) of the log lines in span [first, last); dashes without a span"""
    if not span or None in span:
        return "—", "—"
    if span[0] == span[1]:
        return "", "0 lines"
    tiers, actions, schemes = Counter(), Counter(), Counter()
    for entry in log[span[0]:span[1]]:
        if entry is None:
            actions["unreadable"] += 1
            continue
        # a call forwarded before any decision (too small, switched off) has no tier
        tiers[field(entry, "tier") or "none"] += 1
        action = entry.get("action") or "unknown"
        actions[action] += 1
        if action == "emugemm" and field(entry, "scheme"):
            schemes[field(entry, "scheme")] += 1
    missing = span[1] - min(span[1], len(log))
    if missing:
        # the log is shorter than the run counted: it was replaced or cut
        actions["missing"] += missing
    return counts(tiers), "; ".join(part for part in (counts(actions), counts(schemes)) if part)


def number(x, digits=4):
    return "—" if x is None else f"{x:.{digits}g}"


def exponent(x):
    return "—" if x is None else f"{x:.2e}"


def library_report(outdir, lib):
    """the markdown lines for one library, or [] where it has no runs"""
    unhooked = [read_rows(os.path.join(outdir, f"{lib}.unhooked.{r}.jsonl")) for r in ROUNDS]
    hooked = [read_rows(os.path.join(outdir, f"{lib}.hooked.{r}.jsonl")) for r in ROUNDS]
    if not any(unhooked + hooked):
        return []
    log = read_log(os.path.join(outdir, f"{lib}.hooked.jsonl"))
    ops = list(dict.fromkeys(op for rows in unhooked + hooked for op in rows))
    probes = [op for op in ops if op.startswith("queued")]
    out = [f"## {lib}", "",
           "| op | unhooked ms | hooked ms | hooked x | max diff | residual unhooked | residual hooked | tiers | actions |",
           "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    ratios = []
    for op in ops:
        if op in probes:
            continue
        u, h = median(unhooked, op, "ms"), median(hooked, op, "ms")
        ratio = u / h if u is not None and h else None
        shown = "—" if ratio is None else f"{ratio:.3f}"
        if ratio is not None:
            ratios.append((ratio, op))
            if ratio < SLOWER:
                shown = f"**{shown}**"
        tiers, actions = log_counts(log, first(hooked, op, "log_lines"))
        out.append(f"| {op} | {number(u)} | {number(h)} | {shown} | "
                   f"{exponent(max_diff(first(unhooked, op, 'sample'), first(hooked, op, 'sample')))} | "
                   f"{exponent(first(unhooked, op, 'residual'))} | {exponent(first(hooked, op, 'residual'))} | {tiers} | {actions} |")
    differences = []
    if probes:
        out += ["", "| probe | unhooked host µs | hooked host µs | difference | tiers | actions |", "|---|---:|---:|---:|---|---|"]
        for op in probes:
            u, h = median(unhooked, op, "host_us"), median(hooked, op, "host_us")
            difference = h - u if u is not None and h is not None else None
            shown = "—" if difference is None else f"{difference:+.1f}"
            if difference is not None:
                differences.append(f"{op} {shown} µs")
                if difference > PROBE_SLACK_US:
                    shown = f"**{shown}**"
            tiers, actions = log_counts(log, first(hooked, op, "log_lines"))
            out.append(f"| {op} | {number(u, 5)} | {number(h, 5)} | {shown} | {tiers} | {actions} |")
    slower = sum(ratio < SLOWER for ratio, _ in ratios)
    smallest = f"{min(ratios)[0]:.3f}x ({min(ratios)[1]})" if ratios else "—"
    out += ["", f"**{lib}**: {slower} of {len(ratios)} ops below {SLOWER}x; the smallest ratio {smallest}; "
                f"probes (hooked - unhooked): {', '.join(differences) or '—'}"]
    errors = [f"- {op} ({mode} round {r}): {rows[op]['error']}"
              for mode, rounds in (("unhooked", unhooked), ("hooked", hooked))
              for r, rows in zip(ROUNDS, rounds) for op in rows if rows[op].get("error")]
    if errors:
        out += ["", "Failed ops:"] + errors
    return out + [""]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    if not os.path.isdir(outdir):
        sys.exit(f"{outdir}: not a directory")
    lines = [line for lib in LIBRARIES for line in library_report(outdir, lib)]
    failed = os.path.join(outdir, "failed.txt")
    if os.path.exists(failed):
        with open(failed) as f:
            lines += ["## Failed runs", ""] + [f"- {line.strip()}" for line in f if line.strip()] + [""]
    text = "\n".join(lines) if lines else f"no runs of suite.py in {outdir}\n"
    print(text, end="")
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
