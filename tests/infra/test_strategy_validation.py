"""Terraform's check of default_strategy agrees with the one definition of the strategies.

infra/download.tf cannot load functions/runner/download/strategies.py, so it lists the names; this
test reads that list and its error message back and holds them to the definition. The mock
tests (validation.tftest.hcl) show that Terraform enforces them.
"""

import re

from fanout.common import paths
from fanout.workloads.download import strategies


def default_strategy_block() -> str:
    text = (paths.INFRA / "download.tf").read_text()
    return re.search(r'variable "default_strategy" \{.*?\n\}', text, re.S).group(0)


def test_terraform_allows_exactly_the_defined_strategy_names():
    block = default_strategy_block()
    listed = re.search(r"contains\(\[([^\]]*)\], split", block).group(1)
    assert [name.strip().strip('"') for name in listed.split(",")] == strategies.names()
    message = re.search(r'error_message = "default_strategy must start with a strategy name: ([^."]*)\.', block)
    assert message.group(1) == ", ".join(strategies.names()[:-1]) + f" or {strategies.names()[-1]}"


def test_terraform_keeps_aws_only_strategies_off_custom_endpoints():
    lambda_tf = (paths.INFRA / "lambda.tf").read_text()
    guarded = re.findall(r'local\.download_strategy_name != "([a-z_]+)" \|\| !local\.custom_endpoint', lambda_tf)
    assert guarded == [name for name, s in strategies.STRATEGIES.items() if s.aws_only]


def test_terraform_default_is_the_definitions():
    assert re.search(r'default\s*=\s*"([^"]*)"', default_strategy_block()).group(1) == strategies.DEFAULT
