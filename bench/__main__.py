"""`python -m bench`: run every benchmark module's `main()`, in name order."""

import importlib
import pkgutil

import bench


def main() -> None:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))
    for name in names:
        print(f"== bench.{name}", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
