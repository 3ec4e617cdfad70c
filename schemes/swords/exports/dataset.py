"""SWORDS as a dataset folder (``analysis.exports.dataset``): its targets, candidates and labels
tables keyed by the swords library's ids, and its released format, the SWORDS JSON."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from django.db.models import Count, Q

from analysis.exports import RowCounter
from analysis.exports.base import benchmark_label_set
from analysis.exports.dataset import Column, DatasetLayout, DatasetTable, ReleasedFormat, register_dataset_layout
from analysis.exports.tables import CANDIDATE_COLUMNS, LABEL_COLUMNS, SOURCE_SEPARATOR, candidate_rows, label_rows
from analysis.pseudonyms import WorkerNames
from analysis.swords import POS_TAGS, context_id
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark, LabelValue, Target
from schemes.swords import SWORDS
from schemes.swords.exports.swords_json import swords_pieces
from schemes.swords.progress import evaluated_counts, score_priors
from schemes.swords.settings import settings_of
from schemes.swords.stopping import AnyPrior, source_key


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


def _score_priors(benchmark: Benchmark, split: str | None) -> dict[str, AnyPrior] | None:
    """The priors of the benchmark's expected score (``progress.score_priors``), fitted to the
    candidates exported, as the evaluation fits them; None where the published score is read."""
    settings = settings_of(benchmark)
    if score_priors(settings=settings, rows=()) is None:
        return None
    counts = (
        benchmark_label_set(benchmark, split)
        .order_by()
        .values("candidate_id", "candidate__sources")
        .annotate(accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)), total=Count("id"))
        .values_list("candidate__sources", "accepts", "total")
    )
    return score_priors(
        settings=settings, rows=((source_key(sources or []), accepts, total) for sources, accepts, total in counts)
    )


def _swords_candidates(benchmark: Benchmark, split: str | None, workers: WorkerNames) -> Iterator[dict[str, Any]]:
    ids = _swords_ids(benchmark, split)
    index = {name: position for position, name in enumerate(CANDIDATE_COLUMNS)}
    settings = settings_of(benchmark)
    priors = _score_priors(benchmark, split)
    for row in candidate_rows(benchmark=benchmark, split=split):
        expected_accepts, expected_rejects = evaluated_counts(
            settings=settings,
            priors=priors,
            source=source_key(s for s in row[index["sources"]].split(SOURCE_SEPARATOR) if s),
            accepts=row[index["accepts"]],
            rejects=row[index["rejects"]],
            labels=row[index["labels"]],
        )
        counted = expected_accepts + expected_rejects
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
            "evaluated_score": round(expected_accepts / counted, 6) if counted else None,
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


def _collection_notes(benchmark: Benchmark) -> list[str]:
    """The card's statement of the stopping policy and of the score systems are evaluated with."""
    settings = settings_of(benchmark)
    policy = settings.stopping_policy
    lines = [f"- **Stopping policy**: `{policy}` (when a candidate has labels enough)."]
    if score_priors(settings=settings, rows=()) is not None:
        lines.append(
            "- **Evaluated score**: candidates stopped early have fewer labels than the design's "
            f"{settings.total_labels}, so the candidates table's `evaluated_score`, which systems are evaluated "
            "against, counts each label a stop saved as an accept at the candidate's posterior share of accepts "
            "(a prior per candidate source fitted to this benchmark's labels), and a candidate without an accept "
            "keeps 0; `score` is the observed share."
        )
    else:
        lines.append(
            "- **Evaluated score**: the published SWORDS score, accepts / (accepts + rejects) "
            "(the candidates table's `evaluated_score`)."
        )
    return lines


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
                    "evaluated_score",
                    "float64",
                    "the score systems are evaluated against: accepts / (accepts + rejects), or, for a benchmark "
                    "collected under the adaptive stopping policy, the score expected with the design's full labels "
                    "(for a candidate with an accept, the labels a stop saved counted at its posterior share); null "
                    "without either",
                ),
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
    collection_notes=_collection_notes,
    method_citation="""@inproceedings{lee-etal-2021-swords,
  title = {Swords: A Benchmark for Lexical Substitution with Improved Data Coverage and Quality},
  author = {Lee, Mina and Donahue, Chris and Jia, Robin and Iyabor, Alexander and Liang, Percy},
  booktitle = {Proceedings of NAACL-HLT 2021},
  year = {2021},
  pages = {4362--4379}
}""",
)
register_dataset_layout(SWORDS.name, SWORDS_LAYOUT)
