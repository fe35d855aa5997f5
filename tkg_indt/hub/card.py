"""The dataset card (README.md) of an exported suite: YAML front matter for ``datasets`` and the Hub,
then a card a person can read: summary, tasks, structure, construction, statistics, licence, citation.

Everything in it is computed from the exported variants and their metadata.json, so the card is as
deterministic as the data files.
"""
from __future__ import annotations

import json
import re

import yaml

from .export import FEATURES, VariantExport
from .suites import DEFAULT_VARIANT, HUB_SPLITS, SuiteSpec, variant_params

BIBTEX = {
    # as CITATION.cff: the paper is under review and cited anonymously until it is published
    "grate2026": """@inproceedings{grate2026,
  title     = {{GRATE}: Temporal Extensions for Inductive {KG} Foundation Models via Gated Rotary Attention},
  author    = {Pan, Jiaxin and Mohammed, Osama and Hern{\\'a}ndez, Daniel and Staab, Steffen},
  booktitle = {ICML 2026 Workshop on Graph Foundation Models: A New Era for Graph Machine Learning},
  year      = {2026}
}""",
    "lee2023ingram": """@inproceedings{lee2023ingram,
  title     = {{InGram}: Inductive Knowledge Graph Embedding via Relation Graphs},
  author    = {Lee, Jaejun and Chung, Chanyoung and Whang, Joyce Jiyoung},
  booktitle = {Proceedings of the 40th International Conference on Machine Learning (ICML)},
  series    = {Proceedings of Machine Learning Research},
  volume    = {202},
  year      = {2023}
}""",
    "vrandecic2014wikidata": """@article{vrandecic2014wikidata,
  title   = {Wikidata: A Free Collaborative Knowledgebase},
  author  = {Vrande{\\v{c}}i{\\'c}, Denny and Kr{\\"o}tzsch, Markus},
  journal = {Communications of the ACM},
  volume  = {57},
  number  = {10},
  pages   = {78--85},
  year    = {2014}
}""",
    "leblay2018deriving": """@inproceedings{leblay2018deriving,
  title     = {Deriving Validity Time in Knowledge Graph},
  author    = {Leblay, Julien and Chekol, Melisachew Wudage},
  booktitle = {Companion Proceedings of The Web Conference 2018},
  year      = {2018}
}""",
    "dasgupta2018hyte": """@inproceedings{dasgupta2018hyte,
  title     = {{HyTE}: Hyperplane-based Temporally aware Knowledge Graph Embedding},
  author    = {Dasgupta, Shib Sankar and Ray, Swayambhu Nath and Talukdar, Partha},
  booktitle = {Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year      = {2018}
}""",
    "jin2020recurrent": """@inproceedings{jin2020recurrent,
  title     = {Recurrent Event Network: Autoregressive Structure Inference over Temporal Knowledge Graphs},
  author    = {Jin, Woojeong and Qu, Meng and Jin, Xisen and Ren, Xiang},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year      = {2020}
}""",
    "leetaru2013gdelt": """@inproceedings{leetaru2013gdelt,
  title     = {{GDELT}: Global Data on Events, Location, and Tone, 1979--2012},
  author    = {Leetaru, Kalev and Schrodt, Philip A.},
  booktitle = {ISA Annual Convention},
  year      = {2013}
}""",
    "trivedi2017know": """@inproceedings{trivedi2017know,
  title     = {Know-Evolve: Deep Temporal Reasoning for Dynamic Knowledge Graphs},
  author    = {Trivedi, Rakshit and Dai, Hanjun and Wang, Yichen and Song, Le},
  booktitle = {Proceedings of the 34th International Conference on Machine Learning (ICML)},
  year      = {2017}
}""",
    "goel2020diachronic": """@inproceedings{goel2020diachronic,
  title     = {Diachronic Embedding for Temporal Knowledge Graph Completion},
  author    = {Goel, Rishab and Kazemi, Seyed Mehran and Brubaker, Marcus and Poupart, Pascal},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year      = {2020}
}""",
}

SPLIT_MEANING = {
    "train": "training graph G_train: message passing and training targets",
    "validation": "held out of the training graph (entities and relations of G_train only): model selection",
    "msg": "observed part of the inference graph G_inf: the message-passing graph at test time",
    "test": "held-out part of G_inf (disjoint from msg): the queries that are scored",
}
FIELD_MEANING = {
    "head": "subject entity name (as in the source)",
    "relation": "relation name (as in the source)",
    "tail": "object entity name (as in the source)",
    "time": "time index: {unit} since the source's first timestamp ({first}); gaps kept",
    "date": "calendar label of `time` ({example})",
}


def size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < bound:
            return label
    return "10M<n<100M"


# --------------------------------------------------------------------------- YAML
def front_matter(spec: SuiteSpec, exports: list[VariantExport]) -> dict:
    """The README YAML: Hub metadata, ``configs`` (data files per split) and ``dataset_info`` (sizes)."""
    largest = max(sum(e.num_examples.values()) for e in exports)
    meta = {"pretty_name": spec.name, "license": spec.licence}
    if spec.licence_name:
        meta["license_name"], meta["license_link"] = spec.licence_name, spec.licence_link
    meta.update({
        "task_categories": ["graph-ml"],
        "tags": ["temporal-knowledge-graph", "knowledge-graph-completion", "link-prediction", "inductive",
                 "benchmark"],
        "size_categories": [size_category(largest)],
        "configs": [],
        "dataset_info": [],
    })
    for e in exports:
        config = {"config_name": e.name}
        if e.name == DEFAULT_VARIANT:
            config["default"] = True
        config["data_files"] = [{"split": split, "path": path} for split, path in e.files.items()]
        meta["configs"].append(config)
        meta["dataset_info"].append({
            "config_name": e.name,
            "features": [{"name": n, "dtype": d} for n, d in FEATURES],
            "splits": [{"name": s, "num_bytes": int(e.num_bytes[s]), "num_examples": int(e.num_examples[s])}
                       for s in e.files],
            "download_size": int(sum(e.file_bytes.values())),
            "dataset_size": int(sum(e.num_bytes.values())),
        })
    return meta


# --------------------------------------------------------------------------- body
def _fmt(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (dict, list)):
        return "`" + json.dumps(value, sort_keys=True, ensure_ascii=False) + "`"
    return str(value)


def _first(meta: dict, *keys, default=None):
    """First present key among alternatives (nested keys as 'a.b')."""
    for key in keys:
        node = meta
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                break
            node = node[part]
        else:
            return node
    return default


def duplicates_text(exports: list[VariantExport], source: str) -> str:
    dup = sum(e.stats.get("duplicates", 0) for e in exports)
    merged = (exports[0].meta.get("source") or {}).get("duplicates_merged")
    if dup == 0:
        extra = f" ({_fmt(merged)} repeated events of {source} were merged before sampling)" if merged else ""
        return f"Every quadruple occurs once per config{extra}."
    return f"Repeated quadruples are kept as separate events ({dup:,} repeats over all configs and splits)."


def statistics_table(exports: list[VariantExport]) -> str:
    head = ("config", "p_tri (requested / realised)", "mode", "entities train / inf", "relations train / inf / shared",
            "timestamps train / inf / shared", "train", "validation", "msg", "test")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in exports:
        p, mode = variant_params(e.name)
        real = _first(e.meta, "realised_p_tri", "p_tri_realised", "realised.p_tri", "inference.realised_p_tri")
        s = e.stats
        cells = [f"`{e.name}`", f"{p:.2f} / {real:.3f}" if isinstance(real, (int, float)) else f"{p:.2f} / n/a", mode,
                 f"{s['entities_train']:,} / {s['entities_inference']:,}",
                 f"{s['relations_train']} / {s['relations_inference']} / {s['relations_shared']}",
                 f"{s['timestamps_train']} / {s['timestamps_inference']} / {s['timestamps_shared']}",
                 *(f"{e.num_examples[h]:,}" for h in HUB_SPLITS.values())]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def spans_table(exports: list[VariantExport]) -> str:
    lines = ["| config | training graph | msg | test |", "|---|---|---|---|"]
    for e in exports:
        s = e.stats
        lines.append(f"| `{e.name}` | {s['span_train']} | {s['span_msg']} | {s['span_test']} |")
    return "\n".join(lines)


SHARED_PARAMS = ("p_r", "p_t", "n_tr", "n_inf", "hop_cap", "hops_tr", "hops_inf", "valid_frac", "test_frac", "seed")
NOT_PARAMS = ("source", "suite", "p_tri", "mode")  # shown elsewhere


def parameters_table(exports: list[VariantExport]) -> str:
    """Sampling parameters (one value per suite, else one per config) and the source's provenance."""
    names = [e.name for e in exports]
    params = [e.meta.get("params") or {} for e in exports]
    keys = [*SHARED_PARAMS, *sorted({k for p in params for k in p} - set(SHARED_PARAMS) - set(NOT_PARAMS))]
    values = {k: [p.get(k) for p in params] for k in keys}
    lines = ["| parameter | value |", "|---|---|"]
    for key in keys:
        vals = values[key]
        if all(v is None for v in vals):
            continue
        same = len({json.dumps(v) for v in vals}) == 1
        shown = _fmt(vals[0]) if same else ", ".join(f"{n}: {_fmt(v)}" for n, v in zip(names, vals))
        lines.append(f"| `{key}` | {shown} |")
    source = exports[0].meta.get("source") or {}
    if isinstance(source, dict):
        for key in ("name", "checksum", "facts", "duplicates_merged", "gcc_entities", "relations", "timestamps"):
            if key in source:
                lines.append(f"| source `{key}` | {_fmt(source[key])} |")
    stamps = exports[0].meta.get("timestamps") or {}
    for side, label in (("train", "T_tr"), ("inference", "T_inf")):
        block = stamps.get(side)
        if isinstance(block, dict) and {"first", "last", "count"} <= set(block):
            lines.append(f"| {label} | {block['first']} .. {block['last']} ({block['count']} timestamps) |")
    return "\n".join(lines)


def per_config_table(exports: list[VariantExport]) -> str:
    """Per config: its seed, the X/Y merge and the coverage moves and drops (metadata.json)."""
    head = ("config", "variant seed", "pool X / Y", "taken X / Y", "valid -> train", "test -> msg", "test dropped")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in exports:
        m = e.meta
        smp, cov = m.get("sampling") or {}, m.get("coverage") or {}
        pair = lambda a, b: f"{_fmt(smp[a])} / {_fmt(smp[b])}" if a in smp and b in smp else "n/a"  # noqa: E731
        cells = [f"`{e.name}`", str(m.get("variant_seed", "n/a")), pair("pool_x", "pool_y"), pair("taken_x", "taken_y"),
                 *(_fmt(cov.get(k, "n/a")) for k in ("valid_moved_to_train", "test_moved_to_msg", "test_dropped"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_body(spec: SuiteSpec, exports: list[VariantExport]) -> str:
    from .. import __version__
    from ..data.sources import get_spec
    from ..data.timeenc import TimeEncoding

    source = get_spec(spec.source)
    default = next((e for e in exports if e.name == DEFAULT_VARIANT), exports[0])
    enc = TimeEncoding.from_dict(default.meta["time"])
    unit = {"day": "days", "year": "years", "unit": "units"}[enc.granularity]
    fields = "\n".join(
        f"| `{n}` | {d} | " + FIELD_MEANING[n].format(unit=unit, first=enc.origin_label(),
                                                     example=f"`{enc.label(0)}` for time 0") + " |"
        for n, d in FEATURES)
    splits = "\n".join(f"| `{h}` | `{t}.txt` | {SPLIT_MEANING[h]} |" for t, h in HUB_SPLITS.items())
    configs = ", ".join(f"`{e.name}`" for e in exports)
    line_order = re.split(r" \(|;", str(default.meta.get("line_order", "as in the builder's files")))[0]
    cite_keys = ("grate2026", "lee2023ingram", *spec.citations)
    bibtex = "\n\n".join(BIBTEX[k] for k in cite_keys)
    return f"""# {spec.name}

{spec.name} is a fully-inductive temporal knowledge graph (TKG) completion benchmark built from
{source.name} ({spec.description}). A model is trained on a training graph and applied, without
fine-tuning, to a separate inference graph whose entities are all new; in the `p100` configs its
relations and timestamps are new as well (entity-, relation- and time-disjoint transfer). The suite was
introduced with GRATE (2026) and extends the inductive split generator of INGRAM
(Lee et al., 2023) from triples to quadruples `(head, relation, tail, time)`.

Configs: {configs} (default `{DEFAULT_VARIANT}`). `pXX` is the requested share of
inference facts whose relation *and* time are unseen in training (p_tri = XX/100); `inter` splits the
inference graph into msg/test at random (interpolation), `extra` chronologically (extrapolation:
every msg time precedes every test time).

## Quick start

```python
from datasets import load_dataset

ds = load_dataset("{spec.repo_id}", "{DEFAULT_VARIANT}")   # DatasetDict: train, validation, msg, test
ds["test"][0]   # {{'head': ..., 'relation': ..., 'tail': ..., 'time': ..., 'date': ...}}
```

With the toolkit (`pip install tkg-indt`), the same variant as an indexed graph, and the paper's
evaluation protocol:

```python
import tkg_indt
from tkg_indt.evaluation import evaluate, inductive

tkg = tkg_indt.load_benchmark("{spec.name}", "{DEFAULT_VARIANT}")   # splits train, valid, msg, test
task = inductive(tkg)   # inference graph msg + test with its own ids; queries = test
# result = evaluate(model, task)   # time-aware filtered MRR, Hits@1/3/10, both directions
```

## Supported tasks

- **Inductive temporal link prediction** (graph-ml / knowledge graph completion): for each test quadruple
  `(s, r, o, t)` rank all inference-graph entities for `(s, r, ?, t)` and for `(?, r, o, t)`, with the
  `msg` facts as the only observed graph. Metrics: MRR and Hits@1/3/10 under the time-aware filter
  (a candidate is removed only if it forms a known msg or test fact at the same timestamp), ties
  ranked by their average position.
- The training graph (`train`, `validation`) can be used for training and model selection; nothing
  of the inference graph may be used before test time.

## Dataset structure

Every config has four splits with one schema:

| field | type | meaning |
|---|---|---|
{fields}

| split | builder file | role |
|---|---|---|
{splits}

{duplicates_text(exports, source.name)}
Entity and relation names are those of {source.name}. Rows keep the builder's line order
({line_order}). Each config folder
also holds `metadata.json` with the builder's full record (parameters, seeds, source checksum,
relation and time partitions, per-split counts, coverage moves and drops).

## Statistics

Quadruples per split, and vocabularies of the training graph (train + validation) and the inference
graph (msg + test). Shared counts are the overlap of the two graphs.

{statistics_table(exports)}

Time spans:

{spans_table(exports)}

## Dataset creation

### Source data

{source.name}: {source.description}. Time granularity: {source.granularity}; time 0 is {enc.origin_label()}.
All splits of the source are pooled before sampling.

### Construction procedure

The extended INGRAM procedure (GRATE, appendix "Inductive Transfer Construction Procedure"):

1. Restrict the source to the giant connected component of its undirected entity graph.
2. Partition the relations at random into R_tr and R_inf with |R_inf| / |R| = p_R.
3. Partition the timestamps chronologically: T_tr holds the earliest (1 - p_T)|T|, T_inf the rest, so
   every inference timestamp is later than every training timestamp.
4. Sample n_tr seed entities and expand them breadth-first (hops_tr hops, at most hop_cap random
   neighbours per node and hop); the training facts are those among these entities with a relation in
   R_tr and a time in T_tr, restricted to their giant component, which defines V_tr.
5. Remove V_tr, sample n_inf seeds from the giant component of the rest and expand them (hops_inf hops).
6. Among the facts between inference entities, X = facts with a relation in R_tr and a time in T_tr,
   Y = facts with a relation in R_inf and a time in T_inf; subsample to |X| : |Y| = (1 - p_tri) : p_tri.
7. Split the training facts into train / validation (90/10, random) and the inference facts into
   msg / test (80/20): at random (`inter`) or chronologically (`extra`).

Coverage: a validation fact whose entity or relation is missing from train moves to train, so
validation stays inside the training graph. Every test entity and relation occurs in msg: in `inter`
mode the first test fact mentioning an uncovered one moves to msg; in `extra` mode such test facts are
dropped instead (moving them would break the chronological cut). The moved and dropped counts are
below. Dropping mostly removes new-relation facts, so the realised p_tri (share of inference facts
with an unseen relation and time) can fall below the requested one; the statistics table reports both.

Each config is its own random draw: its seed is derived from the suite seed and the config name, and
all randomness comes from one seeded generator drawing over sorted collections, so a build is
byte-for-byte reproducible (`tkg-indt build --suite {spec.name}` rebuilds it from the source).

### Parameters

{parameters_table(exports)}

Per config:

{per_config_table(exports)}

## Licensing

{spec.licence_text}

## Citation

If you use {spec.name}, please cite the GRATE paper, INGRAM (whose generator it extends) and the
source data:

```bibtex
{bibtex}
```

---
Exported with tkg-indt {__version__}.
"""


def render_readme(spec: SuiteSpec, exports: list[VariantExport]) -> str:
    """README.md text: ``---`` YAML front matter ``---`` then the card body."""
    head = yaml.safe_dump(front_matter(spec, exports), sort_keys=False, allow_unicode=True, width=1000,
                          default_flow_style=False)
    return f"---\n{head}---\n\n{render_body(spec, exports)}"
