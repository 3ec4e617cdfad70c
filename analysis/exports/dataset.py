"""A benchmark as a dataset folder that the Hugging Face ``datasets`` library loads without code
(``datasets.load_dataset(DIR)``) and pandas reads: one Parquet and one JSONL file per table and
split, a ``README.md`` dataset card whose YAML header names the configurations and their files,
and the scheme's released format.

What differs between schemes is a :class:`DatasetLayout` registered under the scheme's name:
its tables (columns with their Arrow types, and the rows) and its released format. SWORDS's
is at the bottom; another scheme registers its own with :func:`register_dataset_layout`. The card
is written by ``analysis.services.dataset`` from the benchmark's figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from analysis.exports.base import RowCounter
from analysis.exports.swords_json import swords_pieces, swords_target_ids
from analysis.exports.tables import CANDIDATE_COLUMNS, LABEL_COLUMNS, SOURCE_SEPARATOR, candidate_rows, label_rows
from analysis.pseudonyms import WorkerNames
from analysis.swords import POS_TAGS, context_id
from annotation.models import Benchmark, Scheme, Target

if TYPE_CHECKING:
    import pyarrow as pa

#: Rows per Parquet row group and per write: memory stays bounded whatever the benchmark's size.
BATCH_ROWS = 10_000
#: The split of a benchmark that has none (Hugging Face's datasets reserves "all" for the union of splits).
WHOLE = "full"

Rows = Callable[[Benchmark, str | None, WorkerNames], Iterator[dict[str, Any]]]


@dataclass(frozen=True)
class Column:
    name: str
    #: The Arrow type: string, int64, float64 or list<string>.
    type: str
    description: str


def _arrow_type(name: str) -> pa.DataType:
    # pyarrow is imported where a table is written: it takes a tenth of a second or more to load,
    # which every command and web process would otherwise pay at start-up.
    import pyarrow as pa

    if name.startswith("list<") and name.endswith(">"):
        return pa.list_(_arrow_type(name[5:-1]))
    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    if name not in types:
        raise ValueError(f"unknown Arrow type {name!r} in a dataset layout")
    return types[name]


@dataclass(frozen=True)
class DatasetTable:
    """One configuration of the dataset: a table with a file per split."""

    name: str
    description: str
    columns: tuple[Column, ...]
    rows: Rows

    @property
    def schema(self) -> pa.Schema:
        import pyarrow as pa

        return pa.schema([(column.name, _arrow_type(column.type)) for column in self.columns])


@dataclass(frozen=True)
class ReleasedFormat:
    """The scheme's own published file format, written once per split."""

    title: str
    folder: str
    suffix: str
    write: Callable[[Benchmark, str | None, IO[str]], None]


@dataclass(frozen=True)
class DatasetLayout:
    tables: tuple[DatasetTable, ...]
    released: ReleasedFormat
    task_categories: tuple[str, ...]
    #: BibTeX of the method the scheme follows, cited beside the benchmark itself.
    method_citation: str


DATASET_LAYOUTS: dict[str, DatasetLayout] = {}


def register_dataset_layout(scheme: str, layout: DatasetLayout) -> None:
    DATASET_LAYOUTS[scheme] = layout


def dataset_layout(benchmark: Benchmark) -> DatasetLayout:
    try:
        return DATASET_LAYOUTS[benchmark.scheme]
    except KeyError:
        raise ValueError(f"the {benchmark.scheme} scheme has no dataset layout yet") from None


def write_table(table: DatasetTable, rows: Iterable[dict[str, Any]], *, parquet: Path, jsonl: Path) -> int:
    """Write one table's rows to Parquet (pyarrow, one row group per batch) and JSONL; returns rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written = 0
    rows = iter(rows)
    with pq.ParquetWriter(parquet, table.schema) as writer, jsonl.open("w", encoding="utf-8") as lines:
        while batch := list(islice(rows, BATCH_ROWS)):
            writer.write_table(pa.Table.from_pylist(batch, schema=table.schema))
            lines.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in batch)
            written += len(batch)
        if not written:
            writer.write_table(table.schema.empty_table())
    return written


# --- SWORDS ----------------------------------------------------------------------------------


def _swords_ids(benchmark: Benchmark, split: str | None) -> dict[int, str]:
    return dict(swords_target_ids(benchmark, split))


def _swords_targets(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    ids = _swords_ids(benchmark, split)
    targets = Target.objects.filter(pk__in=list(ids)).order_by("id")
    for pk, word, offset, pos, lemma, text in targets.values_list(
        "id", "word", "offset", "pos", "lemma", "context__text"
    ):
        yield {
            "target_id": ids[pk],
            "context_id": context_id(text),
            "context": text,
            "target": word,
            "offset": offset,
            "pos": POS_TAGS.get(pos, pos.upper()),
            "lemma": lemma,
        }


def _swords_candidates(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    ids = _swords_ids(benchmark, split)
    index = {name: position for position, name in enumerate(CANDIDATE_COLUMNS)}
    for row in candidate_rows(benchmark=benchmark, split=split):
        yield {
            "target_id": ids[row[index["target_id"]]],
            "substitute": row[index["text"]],
            "sources": [s for s in row[index["sources"]].split(SOURCE_SEPARATOR) if s],
            "stage": row[index["stage"]],
            "accepts": row[index["accepts"]],
            "rejects": row[index["rejects"]],
            "abstains": row[index["abstains"]],
            "labels": row[index["labels"]],
            "score": row[index["score"]],
            "category": row[index["category"]],
        }


def _swords_labels(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    ids = _swords_ids(benchmark, split)
    index = {name: position for position, name in enumerate(LABEL_COLUMNS)}
    for row in label_rows(benchmark=benchmark, workers=workers, split=split):
        yield {
            "target_id": ids[row[index["target_id"]]],
            "substitute": row[index["candidate"]],
            "worker": row[index["worker"]] or None,
            "label": row[index["value"]],
            "step": row[index["step"]],
            "origin": row[index["origin"]],
            "position": row[index["position"]],
        }


def _swords_json(benchmark: Benchmark, split: str | None, out: IO[str]) -> None:
    for piece in swords_pieces(benchmark=benchmark, counter=RowCounter(0, None), split=split):
        out.write(piece)


_TARGET_ID = Column("target_id", "string", "the target's SWORDS id (t: and a SHA-1), as the swords library computes it")
_SUBSTITUTE = Column("substitute", "string", "the substitute (a lemma or phrase)")

SWORDS_LAYOUT = DatasetLayout(
    tables=(
        DatasetTable(
            "targets",
            "one row per target word, with its context",
            (
                _TARGET_ID,
                Column("context_id", "string", "the context's SWORDS id (c: and a SHA-1 of its text)"),
                Column("context", "string", "one to three sentences of text"),
                Column("target", "string", "the target word as it is written in the context"),
                Column("offset", "int64", "character offset of the target in the context"),
                Column("pos", "string", "part of speech: NOUN, VERB, ADJ or ADV"),
                Column("lemma", "string", "the target's lemma where known"),
            ),
            _swords_targets,
        ),
        DatasetTable(
            "candidates",
            "one row per candidate substitute of a target, with its score and category",
            (
                _TARGET_ID,
                _SUBSTITUTE,
                Column("sources", "list<string>", "where the candidate came from (coinco, thesaurus, ...)"),
                Column(
                    "stage",
                    "string",
                    "pipeline stage: reduce (step 2), score (step 3), dropped (after step 2) or final",
                ),
                Column("accepts", "int64", "valid accept labels"),
                Column("rejects", "int64", "valid reject labels"),
                Column("abstains", "int64", "valid abstain labels (the annotator did not know the word)"),
                Column("labels", "int64", "valid labels in all"),
                Column("score", "float64", "accepts / labels (abstain counts as not accepted); null without labels"),
                Column(
                    "category",
                    "string",
                    "acceptable (score > 0.5), conceivable (> 0), inconceivable (0) or unscored",
                ),
            ),
            _swords_candidates,
        ),
        DatasetTable(
            "labels",
            "one row per valid label (judgment) of a candidate",
            (
                _TARGET_ID,
                _SUBSTITUTE,
                Column("worker", "string", "a pseudonym of the annotator, stable within this dataset; null if unknown"),
                Column("label", "string", "accept, reject or abstain"),
                Column("step", "int64", "the pipeline step that collected it (2: reduce, 3: score)"),
                Column("origin", "string", "the imported file it came from; empty when collected on the platform"),
                Column("position", "int64", "its order among the candidate's labels of that origin"),
            ),
            _swords_labels,
        ),
    ),
    released=ReleasedFormat("SWORDS JSON (readable by the swords library)", "swords", ".json", _swords_json),
    task_categories=("fill-mask", "text-ranking"),
    method_citation="""@inproceedings{lee-etal-2021-swords,
  title = {Swords: A Benchmark for Lexical Substitution with Improved Data Coverage and Quality},
  author = {Lee, Mina and Donahue, Chris and Jia, Robin and Iyabor, Alexander and Liang, Percy},
  booktitle = {Proceedings of NAACL-HLT 2021},
  year = {2021},
  pages = {4362--4379}
}""",
)
register_dataset_layout(Scheme.SWORDS, SWORDS_LAYOUT)
