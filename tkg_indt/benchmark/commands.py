"""``tkg-indt build`` and ``tkg-indt check`` (registered on the main CLI group in ``tkg_indt/cli.py``)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

_DATA_DIR = click.option("--data-dir", type=click.Path(file_okay=False), default=None, envvar="TKG_INDT_DATA",
                         help="Folder holding <SOURCE>/train.txt ... Env: TKG_INDT_DATA.")
_OVERRIDES = (("p_r", float, "share of relations kept for the inference graph"),
              ("p_t", float, "share of (latest) timestamps kept for the inference graph"),
              ("n_tr", int, "training seed entities"), ("n_inf", int, "inference seed entities"),
              ("hop_cap", int, "random neighbours per node per hop"), ("hops_tr", int, "BFS hops (training)"),
              ("hops_inf", int, "BFS hops (inference)"), ("valid_frac", float, "valid share of the training graph"),
              ("test_frac", float, "test share of the inference graph"))


def _override_options(fn):
    for name, kind, text in reversed(_OVERRIDES):
        fn = click.option(f"--{name.replace('_', '-')}", name, type=kind, default=None,
                          help=f"{text} (default: recipe)")(fn)
    return click.option("--inf-gcc/--no-inf-gcc", "inf_gcc", default=None,
                        help="keep only the giant component of the inference graph (default: recipe)")(fn)


def _summary(folder: Path) -> str:
    from .load import read_metadata

    m = read_metadata(folder)
    s = m["splits"]
    return (f"{folder}  |V_tr| {m['V_tr']:,}  |V_inf| {m['V_inf']:,}  train {s['train']['quads']:,}  "
            f"valid {s['valid']['quads']:,}  msg {s['msg']['quads']:,}  test {s['test']['quads']:,}  "
            f"new-fact share {m['p_tri_realised']:.3f}")


@click.command()
@click.option("--suite", default=None, help="Build every variant of a suite (GDELTIndT, WIKIIndT).")
@click.option("--source", default=None, help="Build one variant of this source's recipe (gdelt, wiki).")
@click.option("--p-tri", "p_tri", type=float, default=None, help="Share of strictly new inference facts, in (0, 1].")
@click.option("--mode", default=None, help="inter (random msg/test) or extra (chronological msg/test).")
@click.option("--seed", type=int, default=None, help="Recipe seed (default: recipe, 0).")
@_override_options
@click.option("--recipe", default=None, type=click.Path(dir_okay=False), help="A recipe YAML file instead of the shipped one.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder (a variant's, or the suite's root). Default: $TKG_INDT_HOME/benchmarks/<suite>/<variant>.")
@click.option("--force", is_flag=True, help="Rebuild suite variants that are already built with the same parameters.")
@_DATA_DIR
def build(suite, source, p_tri, mode, seed, recipe, out, force, data_dir, **overrides):
    """Build inductive variants (the extended INGRAM procedure of the paper).

    \b
    tkg-indt build --source wiki --p-tri 1.0 --mode inter      one variant
    tkg-indt build --suite WIKIIndT                            all 8 variants
    """
    from ..errors import ParameterError
    from .build import build_suite, build_variant
    from .recipe import get_recipe

    overrides = {k: v for k, v in overrides.items() if v is not None}
    if seed is not None:
        overrides["seed"] = seed
    if suite is not None:
        if source or p_tri is not None or mode:
            raise ParameterError("--suite builds every variant; drop --source/--p-tri/--mode (or drop --suite)")
        rec = get_recipe(recipe or suite).with_overrides(**overrides)
        for folder in build_suite(rec, root=out, data_dir=data_dir, force=force):
            click.echo(_summary(folder))
        return
    if source is None and recipe is None:
        raise ParameterError("give --suite NAME, or --source NAME with --p-tri and --mode")
    folder = build_variant(source, p_tri, mode, out=out, data_dir=data_dir, recipe=recipe, **overrides)
    click.echo(_summary(folder))


@click.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--rebuild/--no-rebuild", default=None,
              help="Compare with a rebuild from the source (default: when the source is available).")
@_DATA_DIR
def check(folders, rebuild, data_dir):
    """Verify every invariant of variant folders (or of every variant under a suite folder).

    Exit code 1 when any invariant is violated; each violation is printed.
    """
    from .check import check_variant
    from .load import SPLITS

    targets = []
    for f in map(Path, folders):
        if any((f / f"{s}.txt").exists() for s in SPLITS) or not any(f.iterdir()):
            targets.append(f)
        else:
            subs = sorted(d for d in f.iterdir() if d.is_dir() and (d / "test.txt").exists())
            targets.extend(subs or [f])
    failed = 0
    for folder in targets:
        report = check_variant(folder, data_dir=data_dir, rebuild=rebuild)
        click.echo(str(report))
        failed += not report.ok
    if failed:
        click.echo(f"{failed} of {len(targets)} variant(s) violate invariants", err=True)
        sys.exit(1)
