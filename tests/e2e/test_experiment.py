"""The user's loop on the local backend: fire, wait (hosting the function), report, through the CLI.

One stack for the module (deploying takes about a minute). Its function timeout is 1 s, so the
queue's visibility timeout is 6 s and a failing message reaches the dead-letter queue after its
5 receives in about half a minute; a 1 MiB object downloads far inside that timeout.
"""

import argparse
import json

import pytest

from fanout import cli, package, params, runs, stack, terraform, upload

STACK = "e2e"
CONCURRENCY = 4
TIMEOUT_S = 1
WAIT = ["--timeout", "240"]


@pytest.fixture(scope="module")
def deployed(emulator, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        inputs = params.from_args(argparse.Namespace(
            stack=STACK, region="us-east-1", concurrency=str(CONCURRENCY), memory="256", object_size="1MiB",
            architecture="x86_64", mode="download_file"))  # fmt: skip
        variables = inputs.variables(emulator, package.build(function="downloader")) | {"timeout": TIMEOUT_S}
        try:
            terraform.apply("local", STACK, variables)
            deployed = stack.load("local", STACK)
            upload.ensure_object(deployed)
            yield deployed
        finally:
            terraform.destroy("local", STACK)


def fanout(*argv: str) -> int:
    return cli.main([*argv[:1], "--backend", "local", "--stack", STACK, *argv[1:]])


def one_line_error(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = fanout(*argv)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return code, err


def summary_of(run_id: str) -> dict:
    return json.loads((runs.run_dir(run_id) / "summary.json").read_text())


def test_every_message_of_a_run_is_accounted_for(deployed):
    assert fanout("fire", "--messages", "40", "--tag", "e2e") == 0
    run_id = runs.resolve(runs.LATEST)
    assert fanout("wait", "--run", run_id, *WAIT) == 0
    assert runs.load(run_id)["accounting"]["done"] == 40
    assert fanout("report", "--run", run_id) == 0

    summary = summary_of(run_id)
    counts = summary["counts"]
    assert counts["sent"] == counts["in_percentile_table"] == counts["download_records"] == counts["seqs_downloaded"] == 40
    (cell,) = summary["cells"]
    assert (cell["memory_size"], cell["concurrency_limit"], cell["experiment_tag"]) == (256, CONCURRENCY, "e2e")
    assert 1 <= cell["peak_concurrency"] <= CONCURRENCY
    assert cell["steady_mean_concurrency"] <= CONCURRENCY
    records = [json.loads(line) for line in (runs.run_dir(run_id) / "records.jsonl").read_text().splitlines()]
    assert sorted(r["seq"] for r in records if r["event"] == "download") == list(range(40))
    for name in ("summary.csv", "report.md", "throughput.png", "concurrency.png", "seconds_cdf.png"):
        assert (runs.run_dir(run_id) / name).stat().st_size > 0


def test_injected_failures_end_in_the_dead_letter_queue(deployed):
    assert fanout("fire", "--messages", "12", "--tag", "failing", "--inject-failures", "0.25") == 0
    record = runs.load(runs.LATEST)
    injected = record["injected_seqs"]
    assert len(injected) == 3
    assert fanout("wait", "--run", record["run_id"], *WAIT) == 0
    accounting = runs.load(record["run_id"])["accounting"]
    assert accounting["dead_lettered"] == injected and accounting["done"] == 12 - len(injected)
    assert accounting["in_flight"] == [] and accounting["failed"] == []

    assert fanout("report", "--run", record["run_id"]) == 0
    summary = summary_of(record["run_id"])
    assert summary["dead_lettered"] == injected
    (errors,) = summary["errors"]
    assert errors["error_type"] == "InjectedFailure" and errors["messages"] == len(injected)
    assert summary["counts"]["seqs_downloaded"] == 12 - len(injected)

    # Read the DLQ directly (this hides its messages for a while: after wait and report).
    sqs = deployed.client("sqs")
    in_dlq = []
    while messages := sqs.receive_message(QueueUrl=deployed.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=30).get("Messages"):
        in_dlq += [json.loads(m["Body"]) for m in messages]
    assert sorted(b["seq"] for b in in_dlq if b["run_id"] == record["run_id"]) == injected


def test_bad_inputs_are_one_line_errors(deployed, capsys):
    latest = runs.resolve(runs.LATEST)
    code, err = one_line_error(capsys, "fire", "--messages", "0")
    assert code == 2 and "'0'" in err
    code, err = one_line_error(capsys, "fire", "--messages", "100000000")
    assert code == 2 and "--yes" in err and "$" in err and "GB-s" in err
    assert runs.resolve(runs.LATEST) == latest  # nothing was sent or recorded
    code, err = one_line_error(capsys, "wait", "--run", "20990101T000000Z-000000")
    assert code == 2 and "20990101T000000Z-000000" in err
    code, err = one_line_error(capsys, "report", "--run", "no-such-run")
    assert code == 2 and "no-such-run" in err
    code, err = one_line_error(capsys, "wait", "--timeout", "-1")
    assert code == 2 and "--timeout" in err
    capsys.readouterr()
    assert cli.main(["fire", "--backend", "local", "--stack", "absent", "--messages", "5"]) == 1
    assert "absent" in capsys.readouterr().err
