"""checkov over infra/: every failed check is fixed, or skipped inline with its reason
(`#checkov:skip=CKV_...: reason`). An unjustified finding fails the suite.

checkov runs from its own virtualenv (.venv-scan, built by `make venv` from
tests/infra/checkov-requirements.txt): it pins an older boto3 than the project does. --skip-download
keeps it offline (it otherwise fetches guideline links from its vendor).
"""

import json
import subprocess

import pytest

from fanout.common import paths

CHECKOV = paths.REPO / ".venv-scan" / "bin" / "checkov"
MIN_REASON = 20  # characters: a reason, not a placeholder


@pytest.fixture(scope="module")
def results() -> dict:
    if not CHECKOV.exists():
        pytest.fail(f"{CHECKOV} is missing: run `make venv` (it builds the scanner's virtualenv)")
    run = subprocess.run([str(CHECKOV), "-d", str(paths.INFRA), "--framework", "terraform", "--skip-download",
                          "--output", "json"], capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr[-2000:]
    report = json.loads(run.stdout)
    (terraform,) = report if isinstance(report, list) else [report]
    assert terraform["summary"]["parsing_errors"] == 0
    return terraform["results"]


def test_no_failed_check(results):
    failed = [f"{c['check_id']} {c['resource']} ({c['file_path']}): {c['check_name']}" for c in results["failed_checks"]]
    assert failed == [], "fix these or skip them inline with a reason:\n" + "\n".join(failed)


def test_every_skip_gives_its_reason(results):
    assert results["skipped_checks"], "expected the documented skips (KMS, VPC...)"
    unexplained = [f"{c['check_id']} {c['resource']}" for c in results["skipped_checks"]
                   if len(c["check_result"].get("suppress_comment", "").strip()) < MIN_REASON]
    assert unexplained == []


def test_the_scanner_checked_every_resource(results):
    scanned = {c["resource"] for kind in ("passed_checks", "failed_checks", "skipped_checks") for c in results[kind]}
    declared = set()
    for tf in paths.INFRA.glob("*.tf"):
        for line in tf.read_text().splitlines():
            if line.startswith("resource "):
                _, kind, name, _ = line.split(maxsplit=3)
                declared.add(f"{kind.strip(chr(34))}.{name.strip(chr(34))}")
    assert {"aws_s3_bucket.data", "aws_lambda_function.downloader", "aws_iam_role_policy.downloader"} <= declared
    assert declared & scanned >= {"aws_s3_bucket.data", "aws_lambda_function.downloader", "aws_sqs_queue.requests"}
