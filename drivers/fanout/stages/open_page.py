"""`fanout open`: the path of the newest report page (index.html) under results/, a run's, an
across-runs' or a sweep's, opened in the desktop's browser (xdg-open) when there is a desktop;
on a server it is the path to copy."""

import argparse
import os
import shutil
import subprocess
from pathlib import Path

from rich.console import Console

from fanout.results import run_folders as runs
from fanout.common import paths
from fanout.common.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("open", help="print the path of the newest report page; open it where a desktop is")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    page = newest_page()
    Console().out(str(page), highlight=False)
    if (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and shutil.which("xdg-open"):
        subprocess.Popen(["xdg-open", str(page)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return 0


def newest_page() -> Path:
    """The most recently written report page under the results folder (`latest` resolved)."""
    pages = {path.resolve() for path in paths.results_dir().glob(f"**/{runs.PAGE_FILE}")}
    found = max(pages, key=lambda path: path.stat().st_mtime, default=None)
    if found is None:
        raise UsageError(f"no report page under {paths.results_dir()} yet: `make report` writes one")
    return found
