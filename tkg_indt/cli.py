"""The ``tkg-indt`` command line. Each command is a thin layer over the Python API."""
from __future__ import annotations

import json
import sys

import click

from .errors import TKGError

DATA_DIR = click.option("--data-dir", type=click.Path(file_okay=False), default=None, envvar="TKG_INDT_DATA",
                        help="Folder holding <SOURCE>/train.txt ... (used without any download). Env: TKG_INDT_DATA.")


class _Group(click.Group):
    """Turns the toolkit's own errors into one clear line and exit code 2, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TKGError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(package_name="tkg-indt")
def main():
    """Benchmarks, baselines and evaluation for inductive temporal knowledge graph reasoning."""


@main.command()
@DATA_DIR
def sources(data_dir):
    """List the known sources and whether each is available locally."""
    from .data.sources import SOURCES, available

    have = available(data_dir)
    click.echo("| source | granularity | train / valid / test | local |")
    click.echo("|---|---|---|---|")
    for name, spec in SOURCES.items():
        counts = " / ".join(f"{spec.counts[s]:,}" for s in ("train", "valid", "test"))
        click.echo(f"| {name} | {spec.granularity} | {counts} | {have[name] or 'not available (tkg-indt download ' + name + ')'} |")


@main.command()
@click.argument("names", nargs=-1, required=True)
def download(names):
    """Download, verify and cache public copies of sources (needs internet)."""
    from .data.download import download_source
    from .data.sources import get_spec

    for name in names:
        files = download_source(get_spec(name))
        click.echo(f"{name}: {files['train'].parent}")


@main.command()
@click.option("--source", "source", default=None, help="A registered source name (see `tkg-indt sources`).")
@click.option("--benchmark", default=None, help="A suite (GDELTIndT, WIKIIndT): the per-variant table of the paper.")
@click.option("--latex", is_flag=True, help="With --benchmark: print a LaTeX tabular instead of markdown.")
@click.option("--build", "build_missing", is_flag=True, help="With --benchmark: build the variants not built yet.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--recurrency", is_flag=True, help="Rec, DRec and median recurrence gap of a split (of --source, or "
              "of each variant of --benchmark SUITE[/VARIANT]).")
@click.option("--split", default="test", show_default=True, help="With --recurrency: the split to describe.")
@DATA_DIR
def stats(source, benchmark, latex, build_missing, as_json, recurrency, split, data_dir):
    """Per-split statistics of a source, or (--benchmark) the per-variant table of a suite."""
    from .data.sources import load_source
    from .stats import dataset_stats, format_table

    if recurrency:
        from .benchmark import load_variants
        from .recurrency_stats import format_recurrency, tkg_recurrency

        if (source is None) == (benchmark is None):
            raise click.UsageError("give --source NAME or --benchmark SUITE[/VARIANT] with --recurrency")
        graphs = [load_source(source, data_dir=data_dir)] if source else load_variants(benchmark)
        rows = {g.name: tkg_recurrency(g, split) for g in graphs}
        return click.echo(json.dumps(rows, indent=1) if as_json else format_recurrency(rows))
    if benchmark is not None:
        from .benchmark.table import print_suite_table

        return print_suite_table(benchmark, latex=latex, build_missing=build_missing, data_dir=data_dir)
    if source is None:
        raise click.UsageError("give --source NAME or --benchmark SUITE")
    tkg = load_source(source, data_dir=data_dir)
    table = dataset_stats(tkg)
    if as_json:
        click.echo(json.dumps({"source": tkg.name, "granularity": tkg.time.granularity, "splits": table}, indent=1))
    else:
        click.echo(f"{tkg.name} ({tkg.time.granularity}ly time, index 0 = {tkg.time.origin_label()})")
        click.echo(format_table(table))


@main.command("eval")
@click.option("--model", default=None, help="A registered model: recurrency, recurrency-strict, recurrency-relaxed, "
              "grate-trix, grate-ultra, trix, ultra, ...")
@click.option("--checkpoint", type=click.Path(file_okay=False), default=None,
              help="A trained GRATE/ULTRA/TRIX checkpoint folder (model.safetensors + config.json).")
@click.option("--dataset", default=None, help="A source (YAGO, ICEWS14-extrap, ...), evaluated with --protocol.")
@click.option("--benchmark", default=None, help="SUITE (all variants), SUITE/VARIANT or a variant folder (inductive).")
@click.option("--protocol", type=click.Choice(["single-step", "transductive", "inductive"]), default=None,
              help="Default: single-step for --dataset, inductive for --benchmark.")
@click.option("--ties", type=click.Choice(["average", "pessimistic", "optimistic", "expected"]), default="average",
              show_default=True, help="Tie policy of the ranks (expected: the mean under random tie-breaking).")
@click.option("--filter", "filter_", type=click.Choice(["time-aware", "static", "raw"]), default="time-aware",
              show_default=True)
@click.option("--params", type=click.Choice(["per-relation", "per-dataset"]), default=None,
              help="Recurrency: parameters selected per relation (default) or one pair per dataset.")
@click.option("--history", type=click.Choice(["with-test", "context"]), default=None,
              help="Recurrency on transductive/inductive tasks: history = message graph + earlier test facts "
                   "(with-test, default) or the message graph only (context: what a learned model sees).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write metrics and selected parameters (JSON).")
@click.option("--ranks", type=click.Path(dir_okay=False), default=None, help="Write per-query ranks (CSV).")
@click.option("--subset", type=click.IntRange(min=0), default=0, show_default=True,
              help="Rank only the tail and head queries of N query facts drawn with --seed (the same facts for "
                   "every model; the report says so). 0: all facts.")
@click.option("--seed", type=int, default=None, help="Seed of --subset (default: tkg_indt.evaluation.SUBSET_SEED).")
@click.option("--progress", is_flag=True, help="Show progress bars.")
@DATA_DIR
def eval_command(model, checkpoint, dataset, benchmark, protocol, ties, filter_, params, history, out, ranks, subset,
                 seed, progress, data_dir):
    """Evaluate a model: MRR, Hits@1/3/10 and MR under the chosen tie policy."""
    from .evaluation.models import format_reports, run_eval, write_json, write_ranks

    if model is None and checkpoint is None:
        raise click.UsageError("give --model NAME or --checkpoint PATH")
    runs = run_eval(model or "checkpoint", dataset=dataset, benchmark=benchmark, protocol=protocol, ties=ties,
                    filter=filter_, params=params, data_dir=data_dir, progress=progress, checkpoint=checkpoint,
                    history=history, subset=subset, seed=seed)
    click.echo(format_reports([r for r, _, _ in runs]))
    if out:
        write_json([r for r, _, _ in runs], out)
    if ranks:
        write_ranks(runs, ranks, ties)


@main.command()
@click.option("--recipe", type=click.Path(dir_okay=False), default=None, help="recipes/train/<name>.yaml")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Run folder. Default: runs/<recipe name>.")
@click.option("--resume", is_flag=True, help="Continue the run in --out from its last saved state.")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N (torchrun: one GPU per process).")
@click.option("--max-steps", type=int, default=None, help="Stop after this many steps of this call (stays resumable).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@DATA_DIR
def train(recipe, out, resume, device, max_steps, quiet, data_dir):
    """Train GRATE / ULTRA / TRIX from a recipe. Data parallel: torchrun --nproc_per_node=N -m tkg_indt.cli train ..."""
    from grate.train import load_recipe, train as run

    if recipe is None and (not resume or out is None):
        raise click.UsageError("give --recipe PATH (or --resume --out RUN_FOLDER)")
    parsed = load_recipe(recipe) if recipe else None
    out = out or f"runs/{parsed.name}"
    summary = run(parsed, out, data_dir=data_dir, resume=resume, device=device, progress=not quiet, max_steps=max_steps)
    if summary:
        click.echo(json.dumps(summary, indent=1))


from .hub.commands import export, publish  # noqa: E402  (Hugging Face Hub: issue 7)

main.add_command(export)
main.add_command(publish)

from .benchmark.commands import build, check  # noqa: E402  (build / check live with the benchmark code)

main.add_command(build)
main.add_command(check)

if __name__ == "__main__":
    main()
