import pytest


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    """Every test writes its run folders into its own results directory."""
    folder = tmp_path / "results"
    monkeypatch.setenv("FANOUT_RESULTS", str(folder))
    return folder
