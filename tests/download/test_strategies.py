"""The drivers' view of the strategies: the function's own definition, usage errors, the docs."""

import re

import pytest

from fanout.common import function_modules, paths
from fanout.workloads.download import strategies
from fanout.common.errors import UsageError


def test_the_drivers_load_the_functions_file():
    source = function_modules.source("strategies")
    assert strategies.definition.__file__ == str(source)
    assert strategies.names() == list(strategies.definition.STRATEGIES)


@pytest.mark.parametrize(
    "text, named",
    [("ftp", "'ftp'"), ("ranged connections=0", "connections='0'"), ("stream chunk_size=1TiB", "chunk_size='1TiB'"),
     ("stream; ranged", "'stream; ranged'")],
)  # fmt: skip
def test_bad_strategies_are_one_line_usage_errors(text, named):
    with pytest.raises(UsageError) as info:
        strategies.parse(text)
    assert named in str(info.value) and "\n" not in str(info.value)


def test_parse_list_is_the_sweep_axis():
    choices = strategies.parse_list("stream; ranged connections=4; ranged connections=16; download_file")
    assert [c.name for c in choices] == ["stream", "ranged", "ranged", "download_file"]
    assert [c.value("connections") for c in choices[1:3]] == [4, 16]
    with pytest.raises(UsageError, match="'ftp'"):
        strategies.parse_list("stream; ftp")


def test_aws_only_strategies_are_refused_with_an_endpoint():
    for name, strategy in strategies.STRATEGIES.items():
        choice = strategies.parse(name)
        strategies.check_endpoint(choice, "")  # AWS itself: always allowed
        if strategy.aws_only:
            with pytest.raises(UsageError, match="runs only against AWS"):
                strategies.check_endpoint(choice, "http://127.0.0.1:4566")
        else:
            strategies.check_endpoint(choice, "http://127.0.0.1:4566")


def test_the_docs_table_is_the_definition():
    text = (paths.REPO / "docs" / "strategies.md").read_text()
    documented = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (\w+) \| (\S+) \.\. (\S+) \| (\S+) \| (.+) \|$", text, re.M)
    expected = [(s.name, p.name, p.kind, p.format(p.low), p.format(p.high), p.format(p.default), p.help)
                for s in strategies.STRATEGIES.values() for p in s.params]  # fmt: skip
    assert documented == expected
