"""Where the toolkit keeps things, and how it writes them without leaving half-written files."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path


def home() -> Path:
    """Cache root: ``$TKG_INDT_HOME`` or ``~/.cache/tkg_indt``."""
    return Path(os.environ.get("TKG_INDT_HOME") or Path.home() / ".cache" / "tkg_indt")


def user_data_dir(data_dir: str | os.PathLike | None = None) -> Path | None:
    """A user folder holding ``<SOURCE>/train.txt`` etc.: the argument, else ``$TKG_INDT_DATA``."""
    value = data_dir if data_dir is not None else os.environ.get("TKG_INDT_DATA")
    return Path(value).expanduser() if value else None


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike, overwrite: bool = True):
    """Yield a temporary folder beside ``target``; move it into place only if the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            if not overwrite:
                raise FileExistsError(f"{target} exists; remove it or pass overwrite")
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike, mode: str = "w", **kwargs):
    """Open a temporary file beside ``target``; rename it over ``target`` when the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.tmp-", dir=target.parent)
    os.close(fd)
    try:
        with open(tmp, mode, **kwargs) as handle:
            yield handle
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
