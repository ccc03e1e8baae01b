"""The function's own modules (functions/downloader/*.py), imported by the drivers from their files.

The function's folder is not a package (its zip's root is the handler's import path), so the
drivers import its modules by path rather than keep copies: the strategies a message may name
and the timeline a record carries then have one definition, the one that runs on Lambda.
"""

import importlib.util
import sys

from fanout import paths


def load(name: str):
    """functions/downloader/<name>.py as the module fanout.function_<name>, imported once."""
    qualified = f"fanout.function_{name}"
    if qualified not in sys.modules:
        spec = importlib.util.spec_from_file_location(qualified, paths.FUNCTIONS / "downloader" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module  # before running it: dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[qualified]
