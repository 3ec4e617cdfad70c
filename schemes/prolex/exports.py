"""ProLex as a dataset folder (``analysis.exports.dataset``, a plug-in of the analysis room):
one row per target with its sentence, acceptable and proficiency-oriented substitutes and their
CEFR levels (the quadruplets of Zhang et al. 2024), the experts' raw judgments (1 / -1 / 0), and
the ProLex CSV beside them; and the ProLex CSV as an export format of its own."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO, Any

from analysis.exports import ExportFormat, ExportRequest, RowCounter, csv_pieces, register_export_format
from analysis.exports.dataset import Column, DatasetLayout, DatasetTable, ReleasedFormat, register_dataset_layout
from analysis.exports.tables import LABEL_COLUMNS, label_rows
from analysis.pseudonyms import WorkerNames
from analysis.selectors import in_split
from annotation.models import Benchmark, Context, Target
from schemes.prolex.figures import columns_of, prolex_agreement, prolex_rows, prolex_statistics
from schemes.prolex.formats import NAME
from schemes.prolex.levels import from_file
from schemes.prolex.rules import LABEL_OF_ANSWER

#: The stored label -> ProLex's judgment (1, -1, 0).
JUDGMENT_OF_LABEL = {label: answer for answer, label in LABEL_OF_ANSWER.items()}


def _level(raw: Any) -> int | None:
    """A level as the tables hold it: 0 to 5 for A1 to C2, 6 for a word no list knows; null for a phrase."""
    return None if raw is None else from_file(raw)


def _levels(raw: Sequence[Any] | None) -> list[int | None] | None:
    return None if raw is None else [_level(level) for level in raw]


def _targets(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    for number, row in enumerate(prolex_rows(benchmark=benchmark, split=split), start=1):
        yield {
            "row": number,
            "target": row.target,
            "sentence": row.unmarked,
            "marked_sentence": row.sentence,
            "acceptable": row.acc_subs,
            "unacceptable": row.unacc_subs,
            "proficiency_acceptable": row.prof_acc_subs,
            "other_acceptable": row.prof_unacc_subs,
            "target_level": _level(row.t_words_cefr),
            "proficiency_acceptable_levels": _levels(row.prof_acc_cefr),
            "other_acceptable_levels": _levels(row.prof_unacc_cefr),
        }


def _judgments(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    index = {name: position for position, name in enumerate(LABEL_COLUMNS)}
    # The sentences of the split, once: a ProLex benchmark holds thousands of them, not millions.
    sentences = dict(
        in_split(Context.objects.filter(benchmark=benchmark), split, "targets__").values_list("pk", "text")
    )
    for row in label_rows(benchmark=benchmark, workers=workers, split=split):
        yield {
            "target": row[index["target"]],
            "sentence": sentences.get(row[index["context_id"]]),
            "substitute": row[index["candidate"]],
            "worker": row[index["worker"]] or None,
            "judgment": JUDGMENT_OF_LABEL.get(row[index["value"]], row[index["value"]]),
            "origin": row[index["origin"]],
            "position": row[index["position"]],
        }


def _prolex_csv(benchmark: Benchmark, split: str | None, out: IO[str]) -> None:
    columns = columns_of(benchmark)
    rows = (row.cells(columns) for row in prolex_rows(benchmark=benchmark, split=split))
    # The release's own text: the same bytes as the `prolex` export, never neutralised for a spreadsheet.
    for piece in csv_pieces(columns, rows, RowCounter(0, None), neutralise=False):
        out.write(piece)


def _card(benchmark: Benchmark, splits: list[str | None]) -> list[str]:
    lines = [
        "## Statistics",
        "",
        "As ProLex counts them: one row per target with an acceptable substitute (more 1s than -1s among the "
        "experts' judgments; 0 decides nothing); proficiency-oriented substitutes are acceptable and at least "
        "the target's CEFR level, a phrase kept.",
        "",
        "| split | targets | contexts | acceptable / target | unacceptable / target "
        "| proficiency-oriented / target | targets without a proficiency-oriented substitute |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for split in splits:
        stats = prolex_statistics(list(prolex_rows(benchmark=benchmark, split=split)))
        per = stats["per_target"]
        lines.append(
            f"| {split or 'full'} | {stats['targets']} | {stats['contexts']} | {_number(per['acceptable'])} "
            f"| {_number(per['unacceptable'])} | {_number(per['proficiency_acceptable'])} "
            f"| {_number(stats['share_targets_without_proficiency_acceptable'])} |"
        )
    agreement = prolex_agreement(benchmark=benchmark)
    lines += ["", "## Agreement", ""]
    if agreement["available"]:
        lines.append(
            f"Cohen's kappa between the two experts over {agreement['items']} substitutes both judged 1 or -1: "
            f"{_number(agreement['kappa'], 3)}, {agreement['confidence']:.0%} bootstrap interval "
            f"{_number(agreement['low'], 3)} to {_number(agreement['high'], 3)}."
        )
    else:
        lines.append(f"Cohen's kappa: {agreement['note']}.")
    return [*lines, ""]


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


_TARGET = Column("target", "string", "the target word")
_SENTENCE = Column("sentence", "string", "the sentence, without marks")
_LEVELS = "CEFR level: 0 to 5 for A1 to C2, 6 for a word no list knows, null for a phrase"

PROLEX_LAYOUT = DatasetLayout(
    tables=(
        DatasetTable(
            "targets",
            "one row per target with an acceptable substitute: its sentence, substitutes and levels",
            (
                Column("row", "int64", "the row's number in the split, as in the ProLex CSV"),
                _TARGET,
                _SENTENCE,
                Column("marked_sentence", "string", "the sentence with the target wrapped in ** (ProLex's Sentence)"),
                Column("acceptable", "list<string>", "acceptable substitutes (more 1s than -1s)"),
                Column("unacceptable", "list<string>", "unacceptable substitutes (more -1s than 1s)"),
                Column(
                    "proficiency_acceptable",
                    "list<string>",
                    "acceptable substitutes at least the target's CEFR level (a phrase kept)",
                ),
                Column("other_acceptable", "list<string>", "acceptable substitutes below the target's level"),
                Column("target_level", "int64", f"the target's {_LEVELS}"),
                Column(
                    "proficiency_acceptable_levels", "list<int64>", f"each proficiency-oriented substitute's {_LEVELS}"
                ),
                Column("other_acceptable_levels", "list<int64>", f"each other acceptable substitute's {_LEVELS}"),
            ),
            _targets,
        ),
        DatasetTable(
            "judgments",
            "one row per valid judgment of a substitute by an expert",
            (
                _TARGET,
                _SENTENCE,
                Column("substitute", "string", "the substitute judged"),
                Column("worker", "string", "a pseudonym of the expert, stable within this dataset; null if unknown"),
                Column("judgment", "string", "1 (acceptable), -1 (unacceptable) or 0 (uncertain)"),
                Column("origin", "string", "the imported file it came from; empty when collected on the platform"),
                Column("position", "int64", "its order among the substitute's judgments of that origin"),
            ),
            _judgments,
        ),
    ),
    released=ReleasedFormat("ProLex CSV (the release's columns)", "prolex", ".csv", _prolex_csv),
    task_categories=("fill-mask", "text-generation"),
    method_citation="""@inproceedings{zhang-etal-2024-prolex,
  title = {{ProLex}: A Benchmark for Language Proficiency-oriented Lexical Substitution},
  author = {Zhang, Xuanming and Chen, Zixun and Yu, Zhou},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2024},
  year = {2024},
  pages = {8475--8493}
}""",
    card_sections=_card,
)


def _pieces(request: ExportRequest) -> Iterator[str]:
    columns = columns_of(request.benchmark)
    rows = (row.cells(columns) for row in prolex_rows(benchmark=request.benchmark))
    # A release format: a sentence that starts with "-" is the release's text, not a formula.
    return csv_pieces(columns, rows, request.counter, neutralise=False)


# The release's file, as an export format of ProLex benchmarks.
register_export_format(
    ExportFormat(
        NAME,
        ".csv",
        "ProLex CSV: target, sentence, acceptable and proficiency-oriented substitutes (the release's columns)",
        _pieces,
        lambda benchmark: Target.objects.filter(benchmark=benchmark).count(),
        schemes=frozenset({NAME}),
    )
)
register_dataset_layout(NAME, PROLEX_LAYOUT)
