"""Ratios against a baseline measured in the same run, the way every benchmark here reports them."""

import statistics


def interleaved(ours, baseline, repeats: int) -> tuple[list[float], list[float]]:
    """`repeats` results of each callable, alternating which goes first in each repeat, so that
    drift in the machine's load hits both alike."""
    mine, theirs = [], []
    for repeat in range(repeats):
        if repeat % 2:
            mine.append(ours())
            theirs.append(baseline())
        else:
            theirs.append(baseline())
            mine.append(ours())
    return mine, theirs


def verdict(ours: list[float], baseline: list[float], target: float, unit: str = "") -> str:
    """`median ratio 1.02x (from 0.97x to 1.10x): meets the 0.95x target`, from paired results."""
    ratios = sorted(o / b for o, b in zip(ours, baseline))
    ratio = statistics.median(ratios)
    judged = "meets" if ratio >= target else "below"
    return (f"median ratio {ratio:.2f}{unit} (from {ratios[0]:.2f}{unit} to {ratios[-1]:.2f}{unit}): "
            f"{judged} the {target:g}{unit} target")  # fmt: skip


def best_of(ours: list[float], baseline: list[float], unit: str = "") -> str:
    """`best of 9: 0.99x`: the best result of each side, over each other. On a loaded machine
    a run is slowed by other work, never sped up, so each side's best is its least disturbed
    run; printed next to the median ratio, not instead of it."""
    return f"best of {len(ours)}: {max(ours) / max(baseline):.2f}{unit}"
