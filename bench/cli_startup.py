"""CLI start-up: how long `fanout --help` and a refused bad value take, against a bare interpreter.

Both are what a user waits for before anything useful happens, so they should cost little more
than starting Python: the parser imports no report module (numpy, scipy, matplotlib load only
when a report or comparison runs). Each command runs as a fresh process of this interpreter,
interleaved with `python -c pass` (the baseline) and repeated; each pair gives the command's
excess over the bare start. The target: the median excess stays within LIMIT_S. The ratio is
printed too, for comparing machines. A command that exits with another status than expected
stops the benchmark: a crash would otherwise pass for a fast start.

`python -m bench.cli_startup --repeats N` (or BENCH_CLI_REPEATS=N) runs it with N pairs per command.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fanout
from bench._ratios import interleaved, judge

REPEATS = int(os.environ.get("BENCH_CLI_REPEATS", "15"))
LIMIT_S = 0.5  # the most a command may add to the bare interpreter's start (median of the pairs)
BASELINE = ("-c", "pass")
COMMANDS = {  # what is timed -> (the interpreter's arguments, the exit status it must end with)
    "fanout --help": (("-m", "fanout.cli", "--help"), 0),
    "fanout deploy --memory 5 (refused)": (("-m", "fanout.cli", "deploy", "--memory", "5"), 2),
}


class UnexpectedExit(RuntimeError):
    """A timed command ended with another exit status than the one it is timed for."""


def timer(arguments: tuple[str, ...], status: int, workdir: str):
    """A callable that runs the interpreter with `arguments` once and returns its wall time (s).

    The child imports the same fanout as this process (PYTHONPATH), and keeps any state it might
    write in `workdir`, never in the repository. It caches compiled bytecode there too, whatever
    PYTHONDONTWRITEBYTECODE says: a user's second start reads compiled modules, and compiling
    fanout's modules on every start would add a cost no user pays."""
    env = {**os.environ, "PYTHONPATH": str(Path(fanout.__file__).parents[1]),
           "PYTHONPYCACHEPREFIX": str(Path(workdir) / "pycache"),
           "FANOUT_HOME": str(Path(workdir) / "home"), "FANOUT_RESULTS": str(Path(workdir) / "results")}  # fmt: skip
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run() -> float:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, *arguments], cwd=workdir, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        if done.returncode != status:
            raise UnexpectedExit(f"`python {' '.join(arguments)}` exited {done.returncode}, expected {status}: "
                                 f"{done.stderr.strip()[-300:]}")  # fmt: skip
        return elapsed

    return run


def main(repeats: int = REPEATS) -> None:
    print(f"cli_startup: wall time of a fresh process, median of {repeats} pairs interleaved with "
          f"`python -c pass`; target: within {LIMIT_S} s of it")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as workdir:
        bare = timer(BASELINE, 0, workdir)
        for name, (arguments, status) in COMMANDS.items():
            command = timer(arguments, status, workdir)
            command(), bare()  # warm-up, untimed: compiled bytecode and the file cache, as a user's second run
            ours, baseline = interleaved(command, bare, repeats)
            print(f"  {name:<36} {_line(name, ours, baseline)}")


def _line(name: str, ours: list[float], baseline: list[float]) -> str:
    """`0.262 s vs bare 0.012 s: +0.250 s (from +0.241 to +0.281), ratio 21.8x: within the 0.5 s
    target`: medians of each side, then of the pairs' excesses (their range) and ratios."""
    excesses = sorted(o - b for o, b in zip(ours, baseline))
    excess = statistics.median(excesses)
    ratio = statistics.median(o / b for o, b in zip(ours, baseline))
    judged = "within" if judge(f"{name}: s over a bare start", excess, at_most=LIMIT_S).met else "over"
    return (f"{statistics.median(ours):.3f} s vs bare {statistics.median(baseline):.3f} s: +{excess:.3f} s "
            f"(from {excesses[0]:+.3f} to {excesses[-1]:+.3f}), ratio {ratio:.1f}x: {judged} the {LIMIT_S} s target")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.cli_startup", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"pairs per command (default {REPEATS})")
    repeats = parser.parse_args().repeats
    if repeats < 1:
        parser.error(f"invalid --repeats {repeats}: expected 1 or more")
    main(repeats)
