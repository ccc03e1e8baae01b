"""The unpacked function packages the host keeps in FANOUT_HOME/code: one tree per package's
bytes, unzipped once, the most recently hosted kept (fanout.local.host.config.unpacked_code)."""

import io
import zipfile

import pytest

from fanout.common.errors import FanoutError
from fanout.local.host import config


def package(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", text)
        archive.writestr("lib/data.json", "{}")
    return buffer.getvalue()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def extractions(monkeypatch) -> list:
    """The trees the host actually unzipped, in order (the real unzip still runs)."""
    done = []
    real = config._extract

    def counted(archive, root):
        done.append(root)
        real(archive, root)

    monkeypatch.setattr(config, "_extract", counted)
    return done


def test_the_same_bytes_are_unzipped_once_and_shared(home, extractions):
    first = config.unpacked_code("fn", package("A = 1\n"))
    second = config.unpacked_code("fn", package("A = 1\n"))
    assert first == second and len(extractions) == 1
    assert (first / "handler.py").read_text() == "A = 1\n" and (first / "lib" / "data.json").is_file()
    assert sorted(p.name for p in (home / "code").iterdir()) == [first.name]  # no scratch left


def test_other_bytes_get_a_tree_of_their_own(home, extractions):
    assert config.unpacked_code("fn", package("A = 1\n")) != config.unpacked_code("fn", package("A = 2\n"))
    assert len(extractions) == 2


def test_only_the_most_recently_hosted_packages_are_kept(home, extractions):
    trees = [config.unpacked_code("fn", package(f"A = {n}\n")) for n in range(config.PACKAGES_KEPT)]
    config.unpacked_code("fn", package("A = 0\n"))  # hosted again: now the most recent
    newest = config.unpacked_code("fn", package("A = new\n"))
    kept = set((home / "code").iterdir())
    assert len(kept) == config.PACKAGES_KEPT and newest in kept and trees[0] in kept
    assert trees[1] not in kept  # the least recently hosted went
    assert len(extractions) == config.PACKAGES_KEPT + 1  # the re-hosted one was not unzipped again


def test_a_package_that_is_not_a_zip_is_refused_and_leaves_nothing(home):
    with pytest.raises(FanoutError, match="the code package of function 'fn' is not a zip file"):
        config.unpacked_code("fn", b"not a zip")
    assert list((home / "code").iterdir()) == []
