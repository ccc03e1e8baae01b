"""Every command in README.md, docs/*.md and the workloads' README.md (each in its folder,
drivers/fanout/workloads/<name>/) runs as written, from the repository root after
`make test-tools` (issue 19; `make venv` alone holds the runtime dependencies).

What counts as a command:
- every line of a fenced code block tagged `sh`, `bash`, `shell`, `console` or not tagged at all
  (lines ending in `\\` joined with the next; blank lines and lines that are only a comment
  aside): a shell block holds commands only;
- an inline code span whose first word, after any `NAME=value` environment assignments, is
  `make`, `fanout`, `python`, `python3` or a `.venv/bin/` program, unless it names a command
  rather than running one: `fanout` with at most its subcommand (`fanout export`), or a synopsis
  with a placeholder (`<id>`, `...`, `a|b`, or an upper-case word such as `FRACTION` or `ID,ID`).

How each is checked, without AWS and without side effects:
- `make ...`: `make -n` (the target and its variables as make reads them), then every `.venv/bin`
  program line it prints is checked as below;
- `fanout ...`: parsed by the real parser (`fanout.cli.build_parser()`), then the command's own
  `check` (its values, no side effect: nothing created, no AWS call, no stack looked up);
- `.venv/bin/python -m bench[.NAME]`: the named benchmarks exist and have a `main()`; any other
  module must exist. A bare `python` is refused: it is not the venv's, and lacks the dependencies;
- `.venv/bin/pytest ...`: pytest collects one small file with those options;
- `python3 -c CODE`: the code compiles (it is not run).
A command shown as an example of an error is marked, after its span `<!-- refused -->` or at the
end of its block line `# refused`: it must then be refused with one line (UsageError).
"""

import importlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import botocore.client
import pytest

from fanout import cli
from fanout.common import paths
from fanout.common.errors import UsageError

DOCS = (paths.REPO / "README.md", *sorted((paths.REPO / "docs").glob("*.md")),
        *sorted((paths.REPO / "drivers" / "fanout" / "workloads").glob("*/README.md")))
SHELL_BLOCKS = ("", "sh", "bash", "shell", "console")
PROGRAMS = ("make", "fanout", "python", "python3")
VENV_BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)\s*$")
SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)(\s*<!--\s*refused\s*-->)?")
ASSIGNMENTS = re.compile(r"^(?:[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)*")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|\||^[A-Z][A-Z0-9_,]*$")
REFUSED = re.compile(r"#\s*refused\s*$")


@dataclass(frozen=True)
class Command:
    """One command of the docs, where it is written, and whether it is an example of an error."""

    path: Path
    line: int
    text: str
    refused: bool = False

    def __str__(self) -> str:
        return f"{self.path.relative_to(paths.REPO)}:{self.line}: {self.text}"


def commands_in(path: Path, text: str) -> list[Command]:
    """The commands of one markdown document, by the rules of the module docstring."""
    found, prose, block, pending = [], [], None, None
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence:
            block = fence.group(1) if block is None else None
            prose.append("")
            continue
        if block is None:
            prose.append(line)
            continue
        prose.append("")
        if block not in SHELL_BLOCKS:
            continue
        start, joined = pending or (number, "")
        joined += line.rstrip("\\").strip() + " "
        pending = (start, joined) if line.endswith("\\") else None
        if pending is None and joined.strip() and not joined.lstrip().startswith("#"):
            found.append(Command(path, start, joined.strip(), bool(REFUSED.search(joined.strip()))))
    return found + _spans(path, "\n".join(prose))


def _spans(path: Path, prose: str) -> list[Command]:
    """The inline code spans of `prose` (a span may go over a line break) that are commands."""
    found = []
    for match in SPAN.finditer(prose):
        text = " ".join(match.group(1).split())
        words = text[ASSIGNMENTS.match(text).end():].split()
        if not words or not (words[0] in PROGRAMS or words[0].startswith(".venv/bin/")):
            continue
        if (words[0] == "fanout" and len(words) <= 2) or _synopsis(text):
            continue
        found.append(Command(path, prose.count("\n", 0, match.start()) + 1, text, bool(match.group(2))))
    return found


def _synopsis(text: str) -> bool:
    """Whether a span shows a command's form rather than one to run: it holds a placeholder."""
    try:
        words = shlex.split(text)
    except ValueError:
        return False  # unbalanced quotes: a command, and its check says why it fails
    return any(PLACEHOLDER.search(word) for word in words if "=" not in word or "<" in word or "..." in word)


def all_commands() -> list[Command]:
    return [command for path in DOCS for command in commands_in(path, path.read_text())]


# -- checks -------------------------------------------------------------------------------------


def check(command: Command) -> None:
    """Check one command; raises AssertionError naming the file, line and command."""
    try:
        words = shlex.split(command.text, comments=True)
    except ValueError as exc:
        raise AssertionError(f"{command}: {exc}") from None
    env = {}
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    try:
        refusal = _check_words(words, env)
    except AssertionError as exc:
        raise AssertionError(f"{command}: {exc}") from None
    if command.refused and refusal is None:
        raise AssertionError(f"{command}: marked as refused, but its checks accept it")
    if not command.refused and refusal is not None:
        raise AssertionError(f"{command}: refused: {refusal}")
    if refusal is not None and "\n" in refusal:
        raise AssertionError(f"{command}: refused with more than one line: {refusal!r}")


def _check_words(words: list[str], env: dict) -> str | None:
    """Check a command line; the refusal's message when its values are refused, else None."""
    program, args = words[0], words[1:]
    if program == "make":
        return _check_make(args, env)
    if program in ("fanout", ".venv/bin/fanout"):
        return check_fanout(args, env)
    if program == ".venv/bin/python":
        return _check_python(args)
    if program == ".venv/bin/pytest":
        return _check_pytest(args)
    if program in ("python", "python3") and args[:1] == ["-c"]:
        compile(args[1], "<doc>", "exec")
        return None
    if program in ("python", "python3"):
        raise AssertionError(f"`{program}` is not the venv's interpreter (it lacks the dependencies): "
                             "write .venv/bin/python")  # fmt: skip
    raise AssertionError(f"{program!r} is not a program this test can check (make, fanout, .venv/bin/...)")


def _check_make(args: list[str], env: dict) -> str | None:
    """`make -n`: make's own refusals, then each venv program line the recipe would run."""
    done = subprocess.run(["make", "-n", *args], cwd=paths.REPO, env=os.environ | env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"make exit {done.returncode}"
    for line in done.stdout.replace("\\\n", " ").splitlines():
        words = _first_command(line)
        if words and words[0] in (".venv/bin/fanout", ".venv/bin/python", ".venv/bin/pytest"):
            refusal = _check_words(words, env)
            if refusal is not None:
                return refusal
    return None


def _first_command(line: str) -> list[str]:
    """The words of a recipe line up to its first shell operator (`cmd || [ $? -eq 3 ]`)."""
    words = shlex.split(line)
    operators = [i for i, word in enumerate(words) if word and set(word) <= set(";&|")]
    return words[:operators[0]] if operators else words


@contextmanager
def _environment(env: dict):
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def check_fanout(args: list[str], env: dict) -> str | None:
    """The real parser, then the command's `check`; its UsageError's message, or None (`--help`
    prints and exits 0: a command that works)."""
    with _environment(env), redirect_stdout(io.StringIO()):
        try:
            parsed = cli.build_parser().parse_args(args)
            if hasattr(parsed, "check"):
                parsed.check(parsed)
        except UsageError as exc:
            return str(exc)
        except SystemExit as exc:
            return None if exc.code == 0 else f"exit {exc.code}"
    return None


def _check_python(args: list[str]) -> str | None:
    if args[:1] != ["-m"] or len(args) < 2:
        raise AssertionError("expected `.venv/bin/python -m MODULE ...`")
    module, rest = args[1], args[2:]
    sys.path.insert(0, str(paths.REPO))  # as `python -m` run from the repository root has it
    try:
        return _check_module(module, rest)
    finally:
        sys.path.remove(str(paths.REPO))


def _check_module(module: str, rest: list[str]) -> str | None:
    if module == "bench":
        from bench.__main__ import known  # noqa: PLC0415 (the repository's folder, importable from its root)

        unknown = [name for argument in rest for name in argument.split() if name not in known()]
        return f"unknown benchmark {unknown[0]!r}" if unknown else None
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise AssertionError(f"no module named {module!r}")
    if module.startswith("bench."):
        if rest:
            raise AssertionError("a benchmark module takes no arguments here")
        if not callable(getattr(importlib.import_module(module), "main", None)):
            raise AssertionError(f"{module} has no main()")
    return None


def _check_pytest(args: list[str]) -> str | None:
    """pytest parses the options and collects one small file with them (-n 0: no workers)."""
    collect = ["--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", "tests/test_bench.py"]
    done = subprocess.run([str(VENV_BIN / "pytest"), *args, *collect], cwd=paths.REPO, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(f"pytest {' '.join(args)} fails: {(done.stderr or done.stdout).strip()[-300:]}")
    return None


# -- tests --------------------------------------------------------------------------------------


@pytest.fixture
def no_side_effects(monkeypatch, tmp_path):
    """State and results in an empty folder that must stay empty, and any AWS call an error."""
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))

    def refuse(*args, **kwargs):
        raise AssertionError("a check made an AWS call")

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", refuse)
    yield
    assert list(tmp_path.iterdir()) == [], "a check created files"


@pytest.mark.parametrize("command", all_commands(), ids=str)
def test_every_command_in_the_docs_runs_as_written(command, no_side_effects):
    check(command)


def test_the_docs_show_commands_of_each_kind():
    """The extraction finds what the docs hold: a change that lost blocks or spans would pass
    the test above vacuously."""
    texts = [re.sub(r"\s+#.*$", "", command.text) for command in all_commands()]
    assert "make demo" in texts  # a shell block in README.md
    assert "fanout insights download-percentiles" in texts  # an untagged block in docs/insights.md
    assert "make deploy REMOTE_REGION=us-west-2 JOB_FILES=4x64MiB" in texts  # a workload's README (seqread's)
    assert 'make sweep WORKLOAD=latency SIZES="1 1KB; 1MB 100MB" REPS="3 10"' in texts  # a span over two lines
    assert not any("<id>" in text for text in texts)  # synopses are not commands


def test_extraction_rules_on_a_sample(tmp_path):
    path = paths.REPO / "docs" / "sample.md"  # only named, never written
    sample = (
        "Run `make deploy\nMEMORY=512` or `make report RUN=<id>` or `fanout fire --strategy TEXT`.\n"
        "`make deploy STORAGE=express`<!-- refused --> and `FANOUT_X=1 make wait HOST=0`; not `STACK=x`.\n"
        "```sh\n"
        "# a comment\n"
        "make sweep CONCURRENCY=\"1 2\" \\\n"
        "     TAG=t # refused\n"
        "```\n"
        "```toml\nmake = 1\n```\n"
    )
    found = [(c.line, c.text, c.refused) for c in commands_in(path, sample)]
    assert found == [
        (6, 'make sweep CONCURRENCY="1 2" TAG=t # refused', True),
        (1, "make deploy MEMORY=512", False),
        (3, "make deploy STORAGE=express", True),
        (3, "FANOUT_X=1 make wait HOST=0", False),
    ]


@pytest.mark.parametrize(
    ("text", "refused", "says"),
    [
        ("make deploy MEMORY=64", False, "memory"),  # refused by fanout's check, after make -n
        ("make fire TAG='a\\b'", False, "tag"),
        ("make nosuchtarget", False, "nosuchtarget"),  # refused by make itself
        ("fanout wait --timeout 0", False, "--timeout"),
        ("FANOUT_HOST_FAULTS=crash=2 make wait", False, "FANOUT_HOST_FAULTS"),
        ("FANOUT_HOST_FAULTS=crash=2 make run", False, "FANOUT_HOST_FAULTS"),
        ("python -m bench.sweep_overhead", False, ".venv/bin/python"),
        (".venv/bin/python -m bench nosuch", False, "nosuch"),
        (".venv/bin/python -m bench.nosuch", False, "bench.nosuch"),
        ("make deploy MEMORY=1024", True, "accept it"),  # marked refused, but fine
    ],
)
def test_a_failing_doc_command_fails_naming_file_line_and_command(text, refused, says, no_side_effects):
    command = Command(paths.REPO / "docs" / "x.md", 7, text, refused)
    with pytest.raises(AssertionError) as failure:
        check(command)
    message = str(failure.value)
    assert message.startswith(f"docs/x.md:7: {text}: ")
    assert says in message


def test_a_command_marked_refused_passes_when_refused_in_one_line(no_side_effects):
    check(Command(paths.REPO / "docs" / "x.md", 1, "make deploy STORAGE=express", refused=True))
