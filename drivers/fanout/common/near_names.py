"""Did you mean...? The nearest known name to a mistyped one, by difflib's ratio.

The Makefile runs this file by its path, with whatever `python3` there is (before any virtualenv
exists), to answer a variable it does not know (`CONCURENCY=4`): so it uses the standard library
alone. `python3 near_names.py NAME... -- KNOWN...` prints one line: each unknown name with the
known one it is nearest to, if any is near enough.
"""

import difflib
import sys

CUTOFF = 0.75  # difflib's ratio from which a known name is offered (CONCURENCY/CONCURRENCY: 0.95)


def nearest(name: str, known: list[str]) -> str | None:
    """The known name closest to `name` (letter case aside), or None when none is close."""
    by_upper = {k.upper(): k for k in known}
    found = difflib.get_close_matches(name.upper(), list(by_upper), n=1, cutoff=CUTOFF)
    return by_upper[found[0]] if found else None


def line(names: list[str], known: list[str]) -> str:
    """`did you mean X?` for each name with a near known one (prefixed with the name when there
    are several), then how to list them all."""
    prefix = (lambda name: f"{name}: ") if len(names) > 1 else (lambda name: "")
    offers = [f"{prefix(name)}did you mean {near}?" for name in names if (near := nearest(name, known))]
    return "; ".join([*offers, "`make help` lists the variables"])


if __name__ == "__main__":
    split = sys.argv.index("--")
    print(line(sys.argv[1:split], sys.argv[split + 1:]))
