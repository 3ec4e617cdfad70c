"""Lexical simplification's export formats (a plug-in of the analysis room, ``schemes.PLUGINS``):
the shared task's gold TSV (``tsar``) and the dataset folder (``analysis.exports.dataset``): one row
per instance with its ranked gold, one per suggestion an annotator typed here, and the gold TSV
beside them. Every annotator's raw answer is also in the answers exports every scheme has
(``answers-csv``, ``answers-jsonl``).

The gold TSV writes the instances in the benchmark's order (an imported file's own order), one
line each ending in a line feed: an imported line exactly as it was written (its suggestions in the
file's order), followed by the suggestions typed here, most frequent first, each repeated once per
annotator who gave it (docs/formats.md, "TSAR-2022 TSV")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from analysis.exports import ExportFormat, RowCounter, register_export_format
from analysis.exports.answers import VALID, answer_rows
from analysis.exports.dataset import Column, DatasetLayout, DatasetTable, ReleasedFormat, register_dataset_layout
from analysis.pseudonyms import WorkerNames
from annotation.models import Benchmark, Target
from schemes.tsar import SIMPLIFY
from schemes.tsar.figures import Instance, tsar_instances, tsar_statistics
from schemes.tsar.formats import NAME


def tsv_pieces(instances: Iterator[Instance], counter: RowCounter) -> Iterator[str]:
    """The gold TSV, a line at a time."""
    for instance in instances:
        yield instance.tsv_line() + "\n"
        counter.tick()


register_export_format(
    ExportFormat(
        NAME,
        ".tsv",
        "TSAR-2022 gold TSV: sentence, complex word, then every annotator's suggestion (most frequent first)",
        lambda request: tsv_pieces(tsar_instances(benchmark=request.benchmark, split=request.split), request.counter),
        lambda benchmark: Target.objects.filter(benchmark=benchmark).count(),
        schemes=frozenset({NAME}),
    )
)


# --- the dataset folder ------------------------------------------------------------------------


def _instances(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    for instance in tsar_instances(benchmark=benchmark, split=split):
        counts = instance.gold.counts()
        ranked = counts.most_common()
        yield {
            "instance_id": instance.target_id,
            "sentence": instance.sentence,
            "complex_word": instance.complex_word,
            "offset": instance.offset,
            "substitutes": [text for text, _ in ranked],
            "counts": [count for _, count in ranked],
            "suggestions": sum(counts.values()),
            "released_suggestions": len(instance.released),
            "collected_suggestions": len(instance.collected),
            "no_simpler_word": instance.none,
        }


def _suggestions(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    """Each valid answer typed here, a row each (the released suggestions name no annotator)."""
    for row in answer_rows(benchmark=benchmark, workers=workers, split=split):
        if row["counts"] != VALID or row["item_kind"] != SIMPLIFY or not isinstance(row["data"], dict):
            continue
        yield {
            "instance_id": row["target_id"],
            "worker": row["worker"],
            "assignment": row["assignment_id"],
            "answer": row["value"],
            "substitute": row["data"].get("substitute") or None,
        }


def _release(benchmark: Benchmark, split: str | None, out: IO[str]) -> None:
    for piece in tsv_pieces(tsar_instances(benchmark=benchmark, split=split), RowCounter(0, None)):
        out.write(piece)


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _card(benchmark: Benchmark, splits: list[str | None]) -> list[str]:
    lines = [
        "## Language",
        "",
        f"The sentences, complex words and suggestions are in `{benchmark.language}` (the benchmark's language tag); "
        "annotators were asked to answer in the sentence's language.",
        "",
        "## Statistics",
        "",
        "As the TSAR-2022 shared task counts them: an instance's suggestions are those it was released with and "
        "those typed here, each once per annotator, the complex word left out; its gold is them ranked by count. "
        "Agreement on the top suggestion is the share of an instance's suggestions that are its most frequent one, "
        "averaged over the instances with suggestions.",
        "",
        "| split | instances | suggestions | released | collected | no simpler word | suggestions / instance "
        "| distinct substitutes / instance | agreement on the top suggestion |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for split in splits:
        stats = tsar_statistics(list(tsar_instances(benchmark=benchmark, split=split)))
        lines.append(
            f"| {split or 'full'} | {stats['instances']} | {stats['suggestions']} | {stats['released_suggestions']} "
            f"| {stats['collected_suggestions']} | {stats['no_simpler_word']} "
            f"| {_number(stats['per_instance']['suggestions'])} "
            f"| {_number(stats['per_instance']['distinct_substitutes'])} "
            f"| {_number(stats['agreement']['top_share'], 3)} |"
        )
    return [*lines, ""]


_INSTANCE_ID = Column("instance_id", "int64", "the instance's id here (its target's id)")

TSAR_LAYOUT = DatasetLayout(
    tables=(
        DatasetTable(
            "instances",
            "one row per instance: the sentence, its complex word and its gold, ranked by count",
            (
                _INSTANCE_ID,
                Column("sentence", "string", "the sentence"),
                Column("complex_word", "string", "the word to simplify"),
                Column("offset", "int64", "character offset of the complex word in the sentence"),
                Column("substitutes", "list<string>", "the distinct suggestions, most frequent first"),
                Column("counts", "list<int64>", "how many annotators gave each substitute, in the same order"),
                Column("suggestions", "int64", "suggestions counted, the complex word left out"),
                Column("released_suggestions", "int64", "suggestions of the imported file"),
                Column("collected_suggestions", "int64", "suggestions typed here"),
                Column("no_simpler_word", "int64", "annotators here to whom no simpler word came"),
            ),
            _instances,
        ),
        DatasetTable(
            "suggestions",
            "one row per answer typed here (valid work only), as submitted",
            (
                _INSTANCE_ID,
                Column("worker", "string", "a pseudonym of the annotator, stable within this dataset"),
                Column("assignment", "int64", "the assignment the answer belongs to"),
                Column("answer", "string", "suggested, or none (no simpler word came to mind)"),
                Column("substitute", "string", "the simpler word typed; null for none"),
            ),
            _suggestions,
        ),
    ),
    released=ReleasedFormat("TSAR-2022 gold TSV (the shared task's layout)", NAME, ".tsv", _release),
    task_categories=("text2text-generation",),
    method_citation="""@inproceedings{saggion-etal-2022-findings,
  title = {Findings of the {TSAR}-2022 Shared Task on Multilingual Lexical Simplification},
  author = {Saggion, Horacio and {\\v{S}}tajner, Sanja and Ferr{\\'e}s, Daniel and Sheang, Kim Cheng and
    Shardlow, Matthew and North, Kai and Zampieri, Marcos},
  booktitle = {Proceedings of the Workshop on Text Simplification, Accessibility, and Readability (TSAR-2022)},
  year = {2022}
}""",
    card_sections=_card,
)
register_dataset_layout(NAME, TSAR_LAYOUT)
