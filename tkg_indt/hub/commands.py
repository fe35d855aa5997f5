"""``tkg-indt export`` and ``tkg-indt publish`` (registered on the main group in :mod:`tkg_indt.cli`)."""
from __future__ import annotations

import click

_SUITE = click.option("--suite", required=True, help="Suite name: WIKIIndT or GDELTIndT.")
_VARIANTS = click.option("--variants", default=None,
                         help="Comma-separated configs to export (default: all eight, p25-inter ... p100-extra).")
_BUILT = click.option("--built", type=click.Path(file_okay=False), default=None,
                      help="Folder holding the built <variant>/ folders (default $TKG_INDT_HOME/benchmarks/<SUITE>).")
_NO_CHECK = click.option("--no-check", is_flag=True, help="Skip re-verifying each variant's invariants before export.")


def _variants(text):
    return [v.strip() for v in text.split(",") if v.strip()] if text else None


@click.command()
@_SUITE
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Target folder (default $TKG_INDT_HOME/hub/<SUITE>); replaced atomically.")
@_VARIANTS
@_BUILT
@_NO_CHECK
def export(suite, out, variants, built, no_check):
    """Write a Hub-ready dataset folder of a built suite (parquet per config and split, README card)."""
    from .export import export_suite, suite_files

    folder = export_suite(suite, out, variants=_variants(variants), built=built, check=not no_check)
    files = suite_files(folder)
    click.echo(f"{folder}: {len(files)} files, {sum(s for _, s in files):,} bytes")
    click.echo(f"check it offline: datasets.load_dataset({str(folder)!r}, 'p100-inter')")


@click.command()
@_SUITE
@click.option("--repo-id", default=None, help="Dataset repository 'owner/name' (default grate/<SUITE>).")
@click.option("--dry-run", is_flag=True, help="Export and list what would be uploaded; no network access.")
@click.option("--private", is_flag=True, help="Create the repository as private.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Export folder (default $TKG_INDT_HOME/hub/<SUITE>).")
@_BUILT
@_NO_CHECK
def publish(suite, repo_id, dry_run, private, out, built, no_check):
    """Export a built suite and upload it to the Hugging Face Hub (token: HF_TOKEN or `hf auth login`)."""
    from .publish import publish_suite

    plan = publish_suite(suite, repo_id, private=private, dry_run=dry_run, folder=out, built=built,
                         check=not no_check)
    if dry_run:
        click.echo("dry run, nothing uploaded; would create (if needed) and upload to " + plan.describe())
    else:
        click.echo(f"uploaded {len(plan.files)} files ({plan.total_bytes:,} bytes) to "
                   f"https://huggingface.co/datasets/{plan.repo_id}: {plan.url}")
