"""Publish an exported suite as a Hugging Face dataset repository.

``publish_suite("WIKIIndT", "grate/WIKIIndT")`` exports the built variants (to
``$TKG_INDT_HOME/hub/<SUITE>``, where ``load_benchmark`` finds them too), creates the dataset repo if
needed and uploads the folder in one commit. The token comes from ``HF_TOKEN`` or the ``hf auth
login`` store. ``dry_run=True`` exports and lists what would be uploaded, touching no network.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..errors import MissingDataError, ParameterError
from .export import export_suite, suite_files
from .suites import get_suite

# remote files of an older export that the new one does not have are deleted in the same commit
DELETE_PATTERNS = ["*.parquet", "*/metadata.json", "*.py"]


@dataclasses.dataclass
class PublishPlan:
    """What a publish uploads: the repo, the local folder and its files (relative path, bytes)."""

    repo_id: str
    folder: Path
    files: list
    private: bool
    url: str | None = None  # commit URL once uploaded

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)

    def describe(self) -> str:
        lines = [f"dataset repo {self.repo_id} ({'private' if self.private else 'public'}), from {self.folder}:"]
        lines += [f"  {size:>12,}  {path}" for path, size in self.files]
        lines.append(f"  {self.total_bytes:>12,}  total, {len(self.files)} files")
        return "\n".join(lines)


def check_repo_id(repo_id: str) -> str:
    parts = str(repo_id).split("/")
    if len(parts) != 2 or not all(parts) or any(c.isspace() for c in repo_id):
        raise ParameterError(f"--repo-id {repo_id!r}: expected 'owner/name', e.g. grate/WIKIIndT")
    return repo_id


def publish_suite(suite: str, repo_id: str | None = None, private: bool = False, dry_run: bool = False,
                  folder=None, export: bool = True, built=None, check: bool = True, token: str | None = None,
                  api=None, commit_message: str | None = None, progress: bool = True) -> PublishPlan:
    """Export ``suite`` and upload it to the dataset repo ``repo_id`` (default ``grate/<SUITE>``).

    folder: where to export (default ``$TKG_INDT_HOME/hub/<SUITE>``); built, check: as for
    :func:`~tkg_indt.hub.export.export_suite`; export=False uploads an existing export as is. Returns the plan (files and sizes; ``url`` of the commit after an upload).
    """
    spec = get_suite(suite)
    repo_id = check_repo_id(repo_id or spec.repo_id)
    if not dry_run:
        token = token or _stored_token()  # HF_TOKEN, else the stored login
        if not token:
            raise MissingDataError("no Hugging Face token. Fix: set HF_TOKEN or run `hf auth login` "
                                   "(or use --dry-run to see what would be uploaded)")
    if export:
        folder = export_suite(spec.name, folder, built=built, check=check, progress=progress)
    else:
        folder = Path(folder) if folder else None
        if folder is None or not (folder / "README.md").exists():
            raise MissingDataError(f"{folder}: no exported suite (README.md). Fix: run tkg-indt export first")
    files = suite_files(folder)
    bad = [p for p, _ in files if p.endswith(".py")]
    if bad:  # a loading script beside the data makes `datasets` >= 4 refuse the repo
        raise ParameterError(f"{folder}: holds Python file(s) {', '.join(bad)}; remove them before publishing")
    plan = PublishPlan(repo_id, Path(folder), files, private)
    if dry_run:
        return plan
    if api is None:
        import huggingface_hub  # imported here: slow, and only needed to upload

        api = huggingface_hub.HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
    info = api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="dataset",
                             commit_message=commit_message or f"Upload {spec.name} ({len(files)} files)",
                             delete_patterns=DELETE_PATTERNS)
    plan.url = getattr(info, "commit_url", None) or str(info)
    return plan


def _stored_token() -> str | None:
    """``HF_TOKEN``, else the token saved by ``hf auth login``."""
    import huggingface_hub

    return os.environ.get("HF_TOKEN") or huggingface_hub.get_token()
