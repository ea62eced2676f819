#!/usr/bin/env python3
"""The SM clock and power under each benchmark row, from the results of scripts/bench-clocks.sh.

usage: scripts/clocks-per-row.py RESULTS NAME

For each timed row (products, cuBLAS baselines and emulation, the fused chassis product), the
median SM clock and power of the nvidia-smi samples taken since the previous row was printed,
counting only samples above 300 W (the GPU busy), and in how many of them the software power cap
was active (clocks_event_reasons bit 0x4). A row's window also holds its host work (inputs,
accuracy), so short rows get few samples.
"""
import statistics
import sys

results, name = sys.argv[1], sys.argv[2]
samples = []
for line in open(f"{results}/smi-{name}.csv"):
    stamp, clock, power, reasons, _ = [x.strip() for x in line.split(",")]
    samples.append((stamp, int(clock.split()[0]), float(power.split()[0]), int(reasons, 16) & 4 != 0))
timed = ("emugemm", "chassis | f64", "DGEMM", "ZGEMM", "emulation")
previous = None
for line in open(f"{results}/bench-{name}.txt"):
    stamp, row = line[:23], line[24:]
    if not row.startswith("|"):
        continue
    if previous and any(w in row for w in timed):
        busy = [s for s in samples if previous <= s[0] <= stamp and s[2] > 300]
        if busy:
            clock = statistics.median(s[1] for s in busy)
            power = statistics.median(s[2] for s in busy)
            capped = sum(s[3] for s in busy)
            cells = row.split(" | ")
            what = " | ".join([cells[0].lstrip("| ")] + cells[1:6])
            print(f"{clock:5.0f} MHz {power:4.0f} W  samples {len(busy):3d} (power cap {capped})  {what}")
    previous = stamp
