"""Ratios against a baseline measured in the same run, the way every benchmark here reports them,
and the figures `python -m bench` collects from them for its closing table."""

import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One judged figure of a benchmark: its value and target (`at_least` and/or `at_most`; neither:
    printed for information, never judged)."""

    name: str
    value: float
    at_least: float | None = None
    at_most: float | None = None

    @property
    def target(self) -> str:
        if self.at_least is not None and self.at_most is not None:
            return f"{self.at_least:g} to {self.at_most:g}"
        if self.at_least is not None:
            return f">= {self.at_least:g}"
        return f"<= {self.at_most:g}" if self.at_most is not None else "(information)"

    @property
    def met(self) -> bool | None:
        if self.at_least is None and self.at_most is None:
            return None
        return (self.at_least is None or self.value >= self.at_least) and (self.at_most is None or self.value <= self.at_most)


FIGURES: list[Figure] = []  # every figure judged since the runner last took them


def judge(name: str, value: float, at_least: float | None = None, at_most: float | None = None) -> Figure:
    """Keep a figure for the closing table and return it (its `met` for the benchmark's own line)."""
    figure = Figure(name, value, at_least, at_most)
    FIGURES.append(figure)
    return figure


def take() -> list[Figure]:
    """The figures judged since the last call, which starts a new list."""
    taken = FIGURES[:]
    FIGURES.clear()
    return taken


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


def timer(action):
    """A callable that runs `action()` and returns the seconds it took, for `interleaved`."""

    def timed() -> float:
        started = time.perf_counter()
        action()
        return time.perf_counter() - started

    return timed


def verdict(ours: list[float], baseline: list[float], target: float, unit: str = "", *, name: str) -> str:
    """`median ratio 1.02x (from 0.97x to 1.10x): meets the 0.95x target`, from paired results
    (higher is better); the median ratio is judged as `name` for the closing table."""
    ratios = sorted(o / b for o, b in zip(ours, baseline))
    ratio = statistics.median(ratios)
    judged = "meets" if judge(name, ratio, at_least=target).met else "below"
    return (f"median ratio {ratio:.2f}{unit} (from {ratios[0]:.2f}{unit} to {ratios[-1]:.2f}{unit}): "
            f"{judged} the {target:g}{unit} target")  # fmt: skip


def best_of(ours: list[float], baseline: list[float], unit: str = "") -> str:
    """`best of 9: 0.99x`: the best result of each side, over each other. On a loaded machine
    a run is slowed by other work, never sped up, so each side's best is its least disturbed
    run; printed next to the median ratio, not instead of it."""
    return f"best of {len(ours)}: {max(ours) / max(baseline):.2f}{unit}"


def paired_median(ours: list[float], baseline: list[float]) -> float:
    """The median of the paired ratios ours / baseline."""
    return statistics.median(o / b for o, b in zip(ours, baseline))
