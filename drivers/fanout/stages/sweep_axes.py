"""The axes of a sweep and its cells: every parameter given as a list is an axis, and the cells
are the Cartesian product of the axes, then those of each explicit cell (`--cell`: the sweep's
axes with some values replaced, for a row a product would not have, such as one 3 GiB file read
by one job where 8 or 16 jobs of 3 GiB do not fit the time limit).

Deploy-level axes need a redeploy between cells, message-level ones only a separate fire. Every
value is checked with deploy's own rules before anything is created. How values are written and
the order the cells run in ("given", "shuffled"): docs/sweep.md.
"""

import itertools
import json
import random
import shlex
from dataclasses import asdict, dataclass, field

from fanout.cloud import params
from fanout.workloads import registry as workloads
from fanout.common.errors import UsageError
from fanout.results import sweep_folders
from fanout.results.sweep_folders import CellParams

ORDERS = ("given", "shuffled")
# Axis name -> (its command-line flag, how one value is checked and typed).
PARSERS = {
    "memory": ("--memory", params.memory_value),
    "concurrency": ("--concurrency", params.concurrency_value),
    "object_size": ("--object-size", params.object_size),
    "architecture": ("--architecture", params.architecture_value),
}
DEPLOY_AXES = tuple(PARSERS)  # each needs a redeploy; the workload's options are message-level


@dataclass(frozen=True)
class Axes:
    """The values of every deploy-level parameter, in the order given (one value is a fixed
    parameter), and the workload's combinations of its options (its driver's sweep_options)."""

    memory: tuple[int, ...]
    concurrency: tuple[int, ...]
    object_size: tuple[int, ...]
    architecture: tuple[str, ...]
    workload: str = workloads.DEFAULT
    options: tuple[dict | None, ...] = field(default=(None,))  # the workload's option combinations, in order
    more: tuple["Axes", ...] = ()  # the explicit cells' axes (--cell), after this product

    @classmethod
    def parse(cls, texts: dict[str, str], workload: str = workloads.DEFAULT, options: tuple = (None,)) -> "Axes":
        """Axes from space- or comma-separated values per axis name, and a workload's option
        combinations (checked by the workload); UsageError naming the first bad value."""
        return cls(**{name: _values(name, texts.get(name)) for name in PARSERS}, workload=workload, options=options)

    @classmethod
    def from_dict(cls, data: dict) -> "Axes":
        """The manifest's axes; an older manifest's download options become its combinations
        (sweep_folders.legacy_axis_options)."""
        options = sweep_folders.legacy_axis_options(data) or tuple(data.get("options", [None]))
        return cls(**{name: tuple(data[name]) for name in PARSERS}, workload=data.get("workload", workloads.DEFAULT),
                   options=options,
                   more=tuple(cls.from_dict(more) for more in data.get("more", [])))  # fmt: skip

    def as_dict(self) -> dict:
        found = {name: value if name == "workload" else list(value) for name, value in asdict(self).items()}
        return {**found, "more": [more.as_dict() for more in self.more]}

    def every(self) -> tuple["Axes", ...]:
        """This product and each explicit cell's."""
        return (self, *self.more)

    def object_sizes(self) -> tuple[int, ...]:
        """Every object size of the sweep's cells, explicit ones included, in order."""
        return tuple(dict.fromkeys(size for axes in self.every() for size in axes.object_size))

    def varying(self) -> list[str]:
        """The names of the axes with more than one value: deploy-level ones, then the options
        whose value differs between the workload's combinations."""
        combos = [combo or {} for combo in self.options]
        names = dict.fromkeys(name for combo in combos for name in combo)
        options = [name for name in names if len({json.dumps(c.get(name), sort_keys=True) for c in combos}) > 1]
        return [name for name in PARSERS if len(getattr(self, name)) > 1] + options

    def cells(self, order: str = "given", seed: int | None = None) -> list[CellParams]:
        """Every cell, in the order `order` (see the module docstring), the explicit cells' after
        the product's, each once."""
        rng = random.Random(seed)
        found = {json.dumps(cell.as_dict(), sort_keys=True): cell
                 for axes in self.every() for cell in axes._product(order, rng)}  # fmt: skip
        return list(found.values())

    def _product(self, order: str, rng: random.Random) -> list[CellParams]:
        product = itertools.product(*(getattr(self, name) for name in DEPLOY_AXES))
        deployments: list[tuple[int, int, int, str]] = list(product)
        fires = list(self.options)
        if order == "shuffled":
            rng.shuffle(deployments)
        cells = []
        for deployment in deployments:
            if order == "shuffled":
                rng.shuffle(fires)
            cells += [CellParams(*deployment, self.workload, options) for options in fires]
        return cells


def explicit_cell(text: str, dests: dict[str, str]) -> dict[str, str]:
    """One --cell: `KEY=VALUE` words (shell quoting for a value with spaces, such as a strategy),
    KEY a flag of the sweep named without its dashes (`file_size` or `file-size` for --file-size);
    {dest: value}. `dests`: each such key's argparse destination. UsageError naming the bad word."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"invalid --cell {text!r}: {exc}") from None
    found = {}
    for word in words:
        key, equals, value = word.partition("=")
        dest = dests.get(key.replace("-", "_"))
        if not equals or dest is None or not value:
            raise UsageError(f"invalid --cell word {word!r} in {text!r}: expected KEY=VALUE, KEY one of "
                             f"{', '.join(sorted(dests))}")  # fmt: skip
        found[dest] = value
    if not found:
        raise UsageError(f"invalid --cell {text!r}: expected KEY=VALUE words such as 'jobs=1 file_size=3GiB'")
    return found


def order(text: str) -> str:
    return params.choice("order", text, ORDERS)


def _values(name: str, text: str | None) -> tuple:
    flag, parse = PARSERS[name]
    return params.list_values(flag, str(text), parse)
