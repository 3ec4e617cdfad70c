"""A benchmark as a dataset folder that the Hugging Face ``datasets`` library loads without code
(``datasets.load_dataset(DIR)``) and pandas reads: one Parquet and one JSONL file per table and
split, a ``README.md`` dataset card whose YAML header names the configurations and their files,
and the scheme's released format.

What differs between schemes is a :class:`DatasetLayout` registered under the scheme's name:
its tables (columns with their Arrow types, and the rows) and its released format; a scheme
registers its own with :func:`register_dataset_layout` from its ``exports`` plug-in. The card
is written by ``analysis.services.dataset`` from the benchmark's figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from analysis.pseudonyms import WorkerNames
from annotation.models import Benchmark

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
    #: The card's sections on what the benchmark holds and how far its annotators agree, as
    #: Markdown lines, given the splits written; None: SWORDS's candidate statistics, agreement
    #: over accept / reject / abstain, spam filtering and the filter audit.
    card_sections: Callable[[Benchmark, list[str | None]], list[str]] | None = None
    #: Lines the card adds to "How it was collected" (Markdown list items), e.g. what score a
    #: candidate is evaluated with; None: none.
    collection_notes: Callable[[Benchmark], list[str]] | None = None


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
