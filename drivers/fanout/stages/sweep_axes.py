"""The axes of a sweep and its cells: every parameter given as a list is an axis, and the cells
are the Cartesian product of the axes.

Deploy-level axes (memory, concurrency, object size, architecture) need a redeploy of the stack
between cells; message-level axes (strategy, pin, and a workload's parameters: `options`, each value
the message fields of one combination, fanout.common.registry) only a separate fire on the same
deployment. Every
value is checked with deploy's own rules before anything is created, so a sweep with one bad
value creates nothing. Values are separated by spaces (or commas: `--pin "none auto 127.0.0.2"`),
strategies by ';' since a strategy with parameters contains spaces (`stream; ranged
connections=4; download_file`). Pin is optional: without --pin every cell connects where DNS says;
its value `none` (fanout.cloud.pins) makes such a cell beside pinned ones.

Order: "given" runs the cells in the order the values were written, deploy-level axes outermost
(memory, then concurrency, object size, architecture) and message-level axes innermost, so that
cells on the same deployment follow each other. "shuffled" permutes the deployments, and the
message-level cells within each deployment, with a seeded generator (the seed is printed and
recorded, so the order can be repeated): a sweep on AWS takes hours, and S3 and Lambda do not
perform the same at every hour, so in the given order that drift would move in step with the
outermost axis and read as its effect. Deployments stay contiguous, because shuffling every cell
would redeploy before nearly every cell.
"""

import itertools
import random
from dataclasses import asdict, dataclass, field

from fanout.cloud import params
from fanout.cloud import pins, strategies
from fanout.common import registry as workloads
from fanout.common.errors import UsageError
from fanout.results.sweep_folders import CellParams

ORDERS = ("given", "shuffled")
# Axis name -> (its command-line flag, how one value is checked and typed).
PARSERS = {
    "memory": ("--memory", params.memory_value),
    "concurrency": ("--concurrency", params.concurrency_value),
    "object_size": ("--object-size", params.object_size),
    "architecture": ("--architecture", params.architecture_value),
    "strategy": ("--strategy", None),  # a list of its own syntax: strategies.parse_list
    "pin": ("--pin (PIN)", pins.parse),  # optional: None (no pin) when not given
}
DEPLOY_AXES = ("memory", "concurrency", "object_size", "architecture")  # the others are message-level


@dataclass(frozen=True)
class Axes:
    """The values of every parameter, in the order given; one value is a fixed parameter."""

    memory: tuple[int, ...]
    concurrency: tuple[int, ...]
    object_size: tuple[int, ...]
    architecture: tuple[str, ...]
    strategy: tuple[str, ...]  # canonical texts
    pin: tuple[str | None, ...] = (None,)  # canonical PIN values; (None,): no --pin
    workload: str = workloads.DEFAULT
    options: tuple[dict | None, ...] = field(default=(None,))  # the workload's parameter combinations

    @classmethod
    def parse(cls, texts: dict[str, str], workload: str = workloads.DEFAULT, options: tuple = (None,)) -> "Axes":
        """Axes from space- or comma-separated values per axis name (strategies separated by ';'),
        and a workload's parameter combinations (checked by the workload); UsageError naming the
        first bad value, or a combination of values that cannot be deployed."""
        axes = cls(**{name: _values(name, texts.get(name)) for name in PARSERS}, workload=workload, options=options)
        for size, strategy in itertools.product(axes.object_size, axes.strategy):
            params.check_fits_tmp(size, strategies.parse(strategy).name)
        for pin, strategy in itertools.product(axes.pin, axes.strategy):
            pins.check_strategy(pin, strategies.parse(strategy))
        return axes

    @classmethod
    def from_dict(cls, data: dict) -> "Axes":
        values = {name: tuple(data.get(name, [None])) for name in PARSERS}  # no pin: sweeps before PIN
        return cls(**values, workload=data.get("workload", workloads.DEFAULT),
                   options=tuple(data.get("options", [None])))

    def as_dict(self) -> dict:
        return {name: value if name == "workload" else list(value) for name, value in asdict(self).items()}

    def varying(self) -> list[str]:
        """The names of the axes with more than one value."""
        return [name for name in (*PARSERS, "options") if len(getattr(self, name)) > 1]

    def cells(self, order: str = "given", seed: int | None = None) -> list[CellParams]:
        """Every cell, in the order `order` (see the module docstring)."""
        product = itertools.product(*(getattr(self, name) for name in DEPLOY_AXES))
        deployments: list[tuple[int, int, int, str]] = list(product)
        fires = list(itertools.product(self.strategy, self.pin, self.options))
        rng = random.Random(seed)
        if order == "shuffled":
            rng.shuffle(deployments)
        cells = []
        for deployment in deployments:
            if order == "shuffled":
                rng.shuffle(fires)
            cells += [CellParams(*deployment, strategy, self.workload, options, pin) for strategy, pin, options in fires]
        return cells


def order(text: str) -> str:
    return params.choice("order", text, ORDERS)


def _values(name: str, text: str | None) -> tuple:
    flag, parse = PARSERS[name]
    if name == "strategy":
        return tuple(str(choice) for choice in strategies.parse_list(str(text)))
    if name == "pin" and text is None:
        return (None,)
    words = [word for word in params.LIST_SEPARATORS.split(str(text).strip()) if word]
    if not words:
        raise UsageError(f"invalid {flag} {text!r}: expected one or more values separated by spaces")
    assert parse is not None, "only the strategy axis has no parser of its own, and it returned above"
    values = tuple(parse(word) for word in words)
    repeated = sorted({word for word, value in zip(words, values) if values.count(value) > 1})
    if repeated:
        raise UsageError(f"invalid {flag} {text!r}: {', '.join(repeated)} given twice (each value is one cell)")
    return values
