"""A corrupt run.json is one line naming the file (exit 1), never a traceback; a folder whose
name is not a run id is not offered as a known run."""

import json

import pytest
from test_fire import make_stack, one_line_error, queue, results  # noqa: F401 - fixtures

from fanout.stages import fire
from fanout.results import run_folders as runs, run_record


@pytest.fixture
def fired(queue, emulator, results):  # noqa: F811
    _, url = queue
    return fire.fire(make_stack(emulator, url), fire.FireParams(5, "t", workers=1))


def _rewrite(record, change) -> bytes:
    data = record.to_json()
    change(data)
    return json.dumps(data).encode()


CORRUPTIONS = {
    "truncated": lambda record: json.dumps(record.to_json()).encode()[:40],
    "binary": lambda record: bytes(range(256)),
    "empty": lambda record: b"",
    "a list": lambda record: b"[1, 2]",
    "negative sent": lambda record: _rewrite(record, lambda d: d.update(sent=-1)),
    "sent above messages": lambda record: _rewrite(record, lambda d: d.update(sent=99)),
    "sent as text": lambda record: _rewrite(record, lambda d: d.update(sent="5")),
    "sent as true": lambda record: _rewrite(record, lambda d: d.update(sent=True)),
    "no run_id": lambda record: _rewrite(record, lambda d: d.pop("run_id")),
    "messages negative": lambda record: _rewrite(record, lambda d: d["parameters"].update(messages=-5)),
    "failed seq out of range": lambda record: _rewrite(record, lambda d: d.update(failed_seqs=[7])),
    "failed seqs not a list": lambda record: _rewrite(record, lambda d: d.update(failed_seqs="none")),
    "stack not an object": lambda record: _rewrite(record, lambda d: d.update(stack=[])),
    "first_send_ms as text": lambda record: _rewrite(record, lambda d: d.update(first_send_ms="soon")),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
@pytest.mark.parametrize("command", ["wait", "report"])
def test_a_corrupt_run_record_is_one_line_naming_the_file(fired, capsys, command, kind):
    path = runs.run_dir(fired.run_id) / runs.RUN_FILE
    path.write_bytes(CORRUPTIONS[kind](fired))
    capsys.readouterr()
    code, err = one_line_error(capsys, [command, "--stack", "unit", "--run", fired.run_id])
    assert code == 1 and str(path) in err and "corrupt run record" in err


def test_an_intact_record_loads(fired):
    assert runs.load(fired.run_id) == fired


def test_a_folder_with_a_bad_name_is_not_a_known_run(fired, capsys):
    stray = runs.run_dir("not-a-run")
    stray.mkdir()
    (stray / runs.RUN_FILE).write_text(json.dumps(fired.to_json()))
    code, err = one_line_error(capsys, ["report", "--run", "not-a-run"])
    assert code == 2 and "not-a-run" in err.split("known runs:")[0] and fired.run_id in err
    assert "not-a-run" not in err.split("known runs:")[1]


OLD_RUN = {  # a run.json of an older fire: strategy as `mode`, no workload, pin or send_status, a key since dropped
    "run_id": "20250101T000000Z-0a0b0c", "backend": "local", "sent": 2, "failed_seqs": [], "first_send_ms": 5,
    "parameters": {"messages": 2, "experiment_tag": "t", "mode": "stream", "mode_from": "message"},
    "stack": {"stack": "s", "backend": "local", "memory": 512, "retired_output": "x"},
    "retired": {"kept": True},
}


def test_an_old_run_reads_by_its_legacy_keys_and_is_written_back_as_it_was(results):  # noqa: F811
    path = runs.run_dir(OLD_RUN["run_id"]) / runs.RUN_FILE
    path.parent.mkdir(parents=True)
    runs.write_json(path, OLD_RUN)
    before = path.read_bytes()
    record = runs.load(OLD_RUN["run_id"])
    # The download's options, recorded beside the generic parameters then, read into their slot.
    assert record.parameters.workload_options == {"strategy": "stream", "strategy_from": "message"}
    assert (record.parameters.workload, record.stack.sdk) == ("download", "runtime")
    runs.update(record)
    assert path.read_bytes() == before
    runs.update(record.but(accounting=run_record.RunAccounting(done=2)))  # what wait adds, and nothing else
    assert json.loads(path.read_text()) == OLD_RUN | {"accounting": run_record.RunAccounting(done=2).to_json()}
