"""Smart Word Suggestions' export formats (a plug-in of the analysis room, ``schemes.PLUGINS``): its
JSON release, sentence by sentence as the paper's file is written; the merged suggestions as CSV
rows; and the dataset folder (``analysis.exports.dataset``): one row per sentence with its targets
(released, then merged from the annotators here), one per suggestion with its votes, the
annotators' raw marks, and the released JSON beside them (Wang et al. 2023)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from analysis.exports import ExportFormat, ExportRequest, RowCounter, csv_pieces, register_export_format
from analysis.exports.answers import VALID, answer_rows
from analysis.exports.dataset import Column, DatasetLayout, DatasetTable, ReleasedFormat, register_dataset_layout
from analysis.pseudonyms import WorkerNames
from annotation.models import Benchmark, Context
from schemes.sws import SENTENCE
from schemes.sws.figures import (
    CSV_FORMAT,
    SUGGESTION_COLUMNS,
    SwsSentence,
    suggestion_rows,
    sws_agreement,
    sws_collected,
    sws_sentences,
    sws_statistics,
)
from schemes.sws.formats import NAME


def release_pieces(sentences: Iterator[SwsSentence], counter: RowCounter) -> Iterator[str]:
    """What ``json.dumps(data, indent=4)`` writes for the whole release, one sentence at a time."""
    first = True
    for sentence in sentences:
        member = json.dumps({sentence.entry.id: sentence.entry.as_release()}, indent=4)[2:-2]
        yield ("{\n" if first else ",\n") + member
        counter.tick()
        first = False
    yield "{}" if first else "\n}"


register_export_format(
    ExportFormat(
        NAME,
        ".json",
        "Smart Word Suggestions JSON: sentences, tokens, targets with {suggestion: votes} and type",
        lambda request: release_pieces(sws_sentences(benchmark=request.benchmark), request.counter),
        lambda benchmark: Context.objects.filter(benchmark=benchmark).count(),
        schemes=frozenset({NAME}),
    )
)


def _csv(request: ExportRequest) -> Iterator[str]:
    return csv_pieces(SUGGESTION_COLUMNS, suggestion_rows(benchmark=request.benchmark), request.counter)


register_export_format(
    ExportFormat(
        CSV_FORMAT,
        ".csv",
        "suggestions, one row per suggestion with its votes, type and voting index (CSV)",
        _csv,
        schemes=frozenset({NAME}),
    )
)


# --- the dataset folder ------------------------------------------------------------------------


def _sentences(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    for sentence in sws_sentences(benchmark=benchmark, split=split):
        targets = sentence.targets()
        yield {
            "sentence_id": sentence.entry.id,
            "sentence": sentence.entry.sentence,
            "tokens": sentence.entry.tokens,
            "targets": [target.text for target in targets],
            "target_types": [target.type for target in targets],
            "target_origins": [target.origin for target in targets],
            "substitutes": json.dumps(sentence.entry.as_release()["substitutes"], ensure_ascii=False),
            "annotators": sentence.annotators,
            "discarded": len(sentence.discarded),
        }


def _suggestions(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    for sentence in sws_sentences(benchmark=benchmark, split=split):
        for target in sentence.targets():
            for suggestion, votes in target.votes:
                yield {
                    "sentence_id": sentence.entry.id,
                    "start": target.span[0],
                    "end": target.span[1],
                    "target": target.text,
                    "suggestion": suggestion,
                    "votes": votes,
                    "type": target.type,
                    "origin": target.origin,
                    "annotators": target.annotators,
                    "voting_index": target.voting_index,
                }


def _marks(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    """Each valid answer's targets, a row each; a sentence set aside is one row without a target."""
    for row in answer_rows(benchmark=benchmark, workers=workers, split=split):
        if row["counts"] != VALID or not row["item_kind"].startswith(SENTENCE) or not isinstance(row["data"], dict):
            continue
        common = {
            "sentence_id": row["context_external_id"] or str(row["context_id"]),
            "worker": row["worker"],
            "assignment": row["assignment_id"],
            "answer": row["value"],
            "discard_reason": row["data"].get("discard") or None,
        }
        targets = row["data"].get("targets") or []
        if not targets:
            yield {
                **common,
                "number": None,
                "start": None,
                "end": None,
                "target": None,
                "suggestions": None,
                "type": None,
            }
            continue
        for number, target in enumerate(targets, start=1):
            yield {
                **common,
                "number": number,
                "start": target["start"],
                "end": target["end"],
                "target": target["text"],
                "suggestions": target["suggestions"],
                "type": target["type"],
            }


def _release(benchmark: Benchmark, split: str | None, out: IO[str]) -> None:
    for piece in release_pieces(sws_sentences(benchmark=benchmark, split=split), RowCounter(0, None)):
        out.write(piece)


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _card(benchmark: Benchmark, splits: list[str | None]) -> list[str]:
    lines = [
        "## Statistics",
        "",
        "As Smart Word Suggestions counts them: the targets each sentence was released with, then those merged "
        "here from the annotators' marks ({suggestion: votes}, the majority type, a target marked by one "
        "annotator dropped).",
        "",
        "| split | sentences | targets | suggestions | votes | suggestions / target | votes / suggestion "
        "| refine-usage | diversify-expression | several words |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    everything = []
    for split in splits:
        sentences = list(sws_sentences(benchmark=benchmark, split=split))
        everything += sentences
        stats = sws_statistics([sentence.entry for sentence in sentences])
        lines.append(
            f"| {split or 'full'} | {stats['contexts']} | {stats['targets']} | {stats['suggestions']} "
            f"| {stats['votes']} | {_number(stats['per_target']['suggestions'])} "
            f"| {_number(stats['per_suggestion']['votes'])} | {stats['types'].get('refine-usage', 0)} "
            f"| {stats['types'].get('diversify-expression', 0)} | {stats['multiword_targets']} |"
        )
    collected = sws_collected(everything)
    agreement = sws_agreement(everything)
    lines += [
        "",
        "## Annotators' work and agreement",
        "",
        f"- Sentences marked here: {collected['sentences_marked']}; answers setting a sentence aside: "
        f"{collected['discarded']}; targets merged: {collected['merged_targets']}, mean voting index "
        f"{_number(collected['voting_index'])}.",
    ]
    if agreement["available"]:
        lines.append(
            f"- Pairwise agreement over {agreement['pairs']} pairs of annotators: PA-det (targets) "
            f"{_number(agreement['pa_det'], 3)}, PA-sug (suggestions of shared targets) "
            f"{_number(agreement['pa_sug'], 3)}."
        )
    else:
        lines.append(f"- Agreement (PA-det, PA-sug): {agreement['note']}.")
    return [*lines, ""]


_SENTENCE_ID = Column("sentence_id", "string", "the sentence's id (the released file's key)")

SWS_LAYOUT = DatasetLayout(
    tables=(
        DatasetTable(
            "sentences",
            "one row per sentence with its targets, released and merged here",
            (
                _SENTENCE_ID,
                Column("sentence", "string", "the sentence"),
                Column("tokens", "list<string>", "its tokens (the released sentence_split)"),
                Column("targets", "list<string>", "each target's words, in the order of substitutes"),
                Column("target_types", "list<string>", "each target's type: refine-usage or diversify-expression"),
                Column("target_origins", "list<string>", "each target's origin: released or collected (merged here)"),
                Column(
                    "substitutes",
                    "string",
                    "the targets as the release writes them, JSON: [[start token, end token], {suggestion: votes}, "
                    "type (1 refine-usage, 2 diversify-expression)]",
                ),
                Column("annotators", "int64", "annotators whose valid work on the sentence was merged here"),
                Column("discarded", "int64", "of them, those who set the sentence aside as having errors"),
            ),
            _sentences,
        ),
        DatasetTable(
            "suggestions",
            "one row per suggestion of a target, with its votes",
            (
                _SENTENCE_ID,
                Column("start", "int64", "the target's first token"),
                Column("end", "int64", "the token after the target's last"),
                Column("target", "string", "the target's words"),
                Column("suggestion", "string", "a suggested replacement"),
                Column("votes", "int64", "annotators who suggested it"),
                Column("type", "string", "refine-usage or diversify-expression"),
                Column("origin", "string", "released, or collected (merged here)"),
                Column("annotators", "int64", "annotators of the sentence here; null for a released target"),
                Column("voting_index", "float64", "share of the sentence's annotators who marked the target"),
            ),
            _suggestions,
        ),
        DatasetTable(
            "marks",
            "one row per target an annotator marked (valid work only), as submitted",
            (
                _SENTENCE_ID,
                Column("worker", "string", "a pseudonym of the annotator, stable within this dataset"),
                Column("assignment", "int64", "the assignment the answer belongs to"),
                Column("answer", "string", "marked, or discarded (the sentence was set aside)"),
                Column("discard_reason", "string", "why the sentence was set aside; null otherwise"),
                Column("number", "int64", "the target's number in the annotator's answer; null without targets"),
                Column("start", "int64", "character offset where the target starts in the sentence"),
                Column("end", "int64", "character offset where it ends (exclusive)"),
                Column("target", "string", "the marked words"),
                Column("suggestions", "list<string>", "the annotator's suggestions for it"),
                Column("type", "string", "refine-usage or diversify-expression"),
            ),
            _marks,
        ),
    ),
    released=ReleasedFormat("Smart Word Suggestions JSON (the release's layout)", "sws", ".json", _release),
    task_categories=("token-classification", "text-generation"),
    method_citation="""@inproceedings{wang-etal-2023-smart,
  title = {Smart Word Suggestions for Writing Assistance},
  author = {Wang, Chenshuo and Mao, Shaoguang and Ge, Tao and Wu, Wenshan and Wang, Xun and Xia, Yan and
    Tien, Jonathan and Zhao, Dongyan},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2023},
  year = {2023}
}""",
    card_sections=_card,
)
register_dataset_layout(NAME, SWS_LAYOUT)
