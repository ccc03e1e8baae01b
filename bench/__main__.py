"""`python -m bench [NAME ...]`: run the named benchmark modules' `main()` (all of them, in name
order, when none is named; an argument may hold several names separated by spaces, as `make bench
BENCH="a b"` passes them); `python -m bench.NAME` runs one with its own options."""

import importlib
import pkgutil
import sys

import bench


def known() -> list[str]:
    """The benchmarks' names, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))


def main(argv: list[str]) -> None:
    unknown = [name for name in argv if name not in known()]
    if unknown:
        sys.exit(f"unknown benchmark {unknown[0]!r}: choose from {', '.join(known())}")
    for name in argv or known():
        print(f"== bench.{name}", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    names = [name for argument in sys.argv[1:] for name in argument.split()]
    del sys.argv[1:]  # the names are ours: a module that parses options must not read them
    main(names)
