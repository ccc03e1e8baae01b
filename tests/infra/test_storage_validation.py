"""Terraform's checks of storage and express_az agree with fanout.workloads.latency.storage, their one definition.

infra/latency.tf cannot import Python, so it lists the classes and spells the zone ID pattern;
this test reads both back. The mock tests (validation.tftest.hcl) show that
Terraform enforces them.
"""

import re

from fanout.common import paths
from fanout.workloads.latency import storage


def variable_block(name: str) -> str:
    text = (paths.INFRA / "latency.tf").read_text()
    return re.search(rf'variable "{name}" \{{.*?\n\}}', text, re.S).group(0)


def test_terraform_allows_exactly_the_defined_classes():
    block = variable_block("storage")
    listed = re.search(r"contains\(\[([^\]]*)\], class\)", block).group(1)
    assert [name.strip().strip('"') for name in listed.split(",")] == list(storage.CLASSES)
    assert f"one or more of {', '.join(storage.CLASSES)}." in block


def test_terraform_default_is_the_definitions():
    default = re.search(r"default\s*=\s*\[([^\]]*)\]", variable_block("storage")).group(1)
    assert tuple(name.strip().strip('"') for name in default.split(",")) == storage.DEFAULT


def test_terraform_checks_zone_ids_with_the_same_pattern():
    pattern = re.search(r'regex\("\^(.*)\$", var\.express_az\)', variable_block("express_az")).group(1)
    assert pattern == storage.AZ_ID_PATTERN.pattern
