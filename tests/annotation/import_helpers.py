"""Helpers for the import tests: writing input files and reading a benchmark back out of the database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotation.models import Benchmark, Candidate, Context, Label, Target

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

RIVER = "The river was calm after the storm. By evening the boats drifted home."
COAT = "She picked the blue coat because it matched her scarf."


def record(**overrides: Any) -> dict[str, Any]:
    """A valid JSONL record; keyword arguments replace fields (None removes one)."""
    data: dict[str, Any] = {
        "context": RIVER,
        "target": "calm",
        "offset": RIVER.index("calm"),
        "pos": "adj",
        "lemma": "calm",
        "candidates": [
            {"text": "still", "sources": ["coinco", "thesaurus"], "labels": ["accept", "reject", "accept", "abstain"]},
            {"text": "peaceful", "sources": ["coinco"]},
            {"text": "serene", "sources": ["thesaurus"], "labels": ["reject"]},
        ],
    }
    for key, value in overrides.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def coat_record() -> dict[str, Any]:
    return record(
        context=COAT,
        target="picked",
        offset=COAT.index("picked"),
        pos="verb",
        lemma="pick",
        candidates=[
            {"text": "chose", "sources": ["coinco"], "labels": ["accept", "accept", "accept"]},
            {"text": "selected", "sources": ["coinco", "thesaurus"], "labels": ["accept", "abstain", "reject"]},
            {"text": "plucked", "sources": ["thesaurus"], "labels": ["reject", "reject", "reject"]},
        ],
    )


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in records), encoding="utf-8")
    return path


def write_csv(path: Path, records: list[dict[str, Any]]) -> Path:
    """The same records in our CSV format: one row per candidate."""
    import csv

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["context", "target", "offset", "pos", "lemma", "candidate", "sources", "labels"])
        for item in records:
            for candidate in item["candidates"]:
                writer.writerow(
                    [
                        item["context"],
                        item["target"],
                        item["offset"],
                        item["pos"],
                        item.get("lemma", ""),
                        candidate["text"],
                        ";".join(candidate.get("sources", [])),
                        ";".join(candidate.get("labels", [])),
                    ]
                )
    return path


def stored_records(benchmark: Benchmark) -> list[dict[str, Any]]:
    """The benchmark read back in the shape of our JSONL records (targets and candidates by id)."""
    result = []
    for target in Target.objects.filter(benchmark=benchmark).select_related("context").order_by("id"):
        candidates = []
        for candidate in Candidate.objects.filter(target=target).order_by("id"):
            labels = [label.raw_value for label in candidate.labels.order_by("position")]
            entry: dict[str, Any] = {"text": candidate.text, "sources": candidate.sources}
            if labels:
                entry["labels"] = labels
            candidates.append(entry)
        result.append(
            {
                "context": target.context.text,
                "target": target.word,
                "offset": target.offset,
                "pos": target.pos,
                "lemma": target.lemma,
                "candidates": candidates,
            }
        )
    return result


def swords_from_db(benchmark: Benchmark) -> dict[str, Any]:
    """Rebuild a SWORDS file from what the import stored (the contract in docs/formats.md)."""
    contexts = {}
    for context in Context.objects.filter(benchmark=benchmark).order_by("id"):
        obj: dict[str, Any] = {"context": context.text}
        if "extra" in context.extra["swords"]:
            obj["extra"] = context.extra["swords"]["extra"]
        contexts[context.external_id] = obj
    targets = {}
    for target in Target.objects.filter(benchmark=benchmark).select_related("context").order_by("id"):
        kept = target.extra["swords"]
        obj = {
            "context_id": target.context.external_id,
            "target": kept.get("target", target.word),
            "offset": target.offset,
            "pos": kept["pos"],
        }
        if "extra" in kept:
            obj["extra"] = kept["extra"]
        targets[target.external_id] = obj
    substitutes = {}
    labels = {}
    candidates = Candidate.objects.filter(target__benchmark=benchmark).select_related("target").order_by("id")
    for candidate in candidates:
        obj = {"target_id": candidate.target.external_id, "substitute": candidate.text}
        if "extra" in candidate.extra["swords"]:
            obj["extra"] = candidate.extra["swords"]["extra"]
        substitutes[candidate.external_id] = obj
        labels[candidate.external_id] = list(
            Label.objects.filter(candidate=candidate).order_by("position").values_list("raw_value", flat=True)
        )
    return {
        "contexts": contexts,
        "targets": targets,
        "substitutes": substitutes,
        "substitutes_lemmatized": benchmark.extra["swords"]["substitutes_lemmatized"],
        "substitute_labels": labels,
    }


def row_counts() -> dict[str, int]:
    return {
        "benchmarks": Benchmark.objects.count(),
        "contexts": Context.objects.count(),
        "targets": Target.objects.count(),
        "candidates": Candidate.objects.count(),
        "labels": Label.objects.count(),
    }


def snapshot() -> dict[str, list[tuple[Any, ...]]]:
    """Every imported row with its id, to show that a repeated import changed nothing."""
    return {
        "contexts": list(Context.objects.order_by("id").values_list("id", "text", "digest", "external_id", "extra")),
        "targets": list(
            Target.objects.order_by("id").values_list("id", "context_id", "word", "offset", "pos", "extra")
        ),
        "candidates": list(Candidate.objects.order_by("id").values_list("id", "target_id", "text", "sources", "extra")),
        "labels": list(Label.objects.order_by("id").values_list("id", "candidate_id", "value", "position", "origin")),
    }


def api_import(client: Any, name: str, data: dict[str, Any], capture: Any) -> tuple[Any, dict[str, Any]]:
    """POST an import to the API, let its job run once the request's work is committed (as a
    worker, or the embedded default, does), and read the job back: (the 202 response, the job)."""
    from django.urls import reverse

    with capture(execute=True):
        response = client.post(reverse("api-benchmark-import", args=[name]), data)
    assert response.status_code == 202, response.content
    job = client.get(response.json()["url"])
    assert job.status_code == 200, job.content
    return response, job.json()
