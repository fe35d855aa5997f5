import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]


def _shared_data():
    env = os.environ.get("TKG_INDT_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    candidate = _REPO.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def data_dir():
    """The real raw datasets (../shared/data or $TKG_INDT_DATA); tests needing them skip if absent."""
    path = _shared_data()
    if path is None:
        pytest.skip("real datasets not available (set TKG_INDT_DATA)")
    return path


@pytest.fixture(scope="session", autouse=True)
def _session_home(tmp_path_factory):
    """Every test session gets its own cache: nothing leaks into ~/.cache."""
    home = tmp_path_factory.mktemp("tkg_home")
    old = os.environ.get("TKG_INDT_HOME")
    os.environ["TKG_INDT_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("TKG_INDT_HOME", None)
    else:
        os.environ["TKG_INDT_HOME"] = old


@pytest.fixture
def tkg_home(tmp_path, monkeypatch):
    """A fresh, empty TKG_INDT_HOME for one test."""
    home = tmp_path / "home"
    monkeypatch.setenv("TKG_INDT_HOME", str(home))
    return home


@pytest.fixture
def one_thread():
    """Tiny tensors: one torch thread avoids OpenMP wake-up and spin-wait costs on a shared 2-core machine."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
