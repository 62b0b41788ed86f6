"""The multimodality check's false positives on unimodal noise, and its power.

Draws seeded samples (so the table is the same on every machine) from
unimodal distributions shaped like benchmark noise, and from two regimes
apart, and counts how often :func:`ireebench.plugins.modality.repetition_groups`
finds more than one group (for two regimes: the right two). Prints the
tables; ``--write`` puts them into docs/statistics.md (between the
``modality_rates`` markers).

    python benchmarks/modality_rates.py [--write]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from compare_native import ROOT, write_section
from ireebench.plugins.modality import repetition_groups

STATISTICS_MD = ROOT / "docs" / "statistics.md"
BEGIN, END = "<!-- modality_rates: begin -->", "<!-- modality_rates: end -->"
SIZES = (5, 10, 20, 50, 100)
UNIMODAL = {
    "normal, cv 5 %": lambda rng, n: rng.normal(1.0, 0.05, n),
    "normal, cv 20 %": lambda rng, n: rng.normal(1.0, 0.20, n),
    "log-normal, σ 0.3": lambda rng, n: rng.lognormal(0.0, 0.3, n),
    "1 + exponential (mean 0.2)": lambda rng, n: 1.0 + rng.exponential(0.2, n),
    "uniform 1–1.3": lambda rng, n: rng.uniform(1.0, 1.3, n),
    "1 + 0.1 gamma(2)": lambda rng, n: 1.0 + 0.1 * rng.gamma(2.0, 1.0, n),
    "1 + 0.03 \\|t₃\\| (heavy tail)": lambda rng, n: 1 + 0.03 * np.abs(rng.standard_t(3, n)),
}
# (ratio of the regimes, cv within each, repetitions, of which in the slow regime)
REGIMES = [(2, .01, 5, 2), (2, .03, 10, 2), (2, .05, 10, 2), (2, .1, 10, 2), (2, .05, 10, 5),
           (1.25, .01, 10, 3), (1.25, .03, 10, 3), (1.5, .05, 20, 5), (2, .03, 100, 10)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {STATISTICS_MD}")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    lines = ["| unimodal noise | " + " | ".join(f"n = {n}" for n in SIZES) + " |",
             "| --- |" + " --- |" * len(SIZES)]
    for name, draw in UNIMODAL.items():
        cells = []
        for n in SIZES:
            trials = 4000 if n <= 20 else 1000
            found = sum(len(repetition_groups(list(draw(rng, n)))) > 1 for _ in range(trials))
            cells.append(f"{100 * found / trials:.2f} %")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "| two regimes | found as those two groups |", "| --- | --- |"]
    for ratio, cv, n, slow in REGIMES:
        trials = 1000
        found = sum([len(group) for group in repetition_groups(
            list(rng.normal(1.0, cv, n - slow)) + list(rng.normal(ratio, ratio * cv, slow)))]
            == [n - slow, slow] for _ in range(trials))
        lines.append(f"| {n - slow} + {slow} repetitions, {ratio:g}x apart, cv {100 * cv:g} % "
                     f"each | {100 * found / trials:.0f} % |")
    section = "\n".join([
        ("`python benchmarks/modality_rates.py --write` (seeded: the same on every machine; "
        "4000 samples per cell up to n = 20, 1000 above). The share of samples in which "
        "the check reports groups:"), "", *lines])
    print(section)
    if args.write:
        write_section(BEGIN, END, section, STATISTICS_MD)
    return 0


if __name__ == "__main__":
    sys.exit(main())
