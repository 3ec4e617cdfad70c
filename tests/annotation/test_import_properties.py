"""Properties of the merge rules, over generated candidate lists."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Candidate, normalize_candidate
from annotation.services import benchmark_import
from tests.annotation.import_helpers import record

pytestmark = pytest.mark.django_db

_names = itertools.count()
words = st.sampled_from(["still", "Still", " still ", "STILL", "quiet", "quiet  place", "Quiet Place", "calm", "hush"])
candidates = st.lists(
    st.fixed_dictionaries(
        {
            "text": words,
            "sources": st.lists(st.sampled_from(["coinco", "thesaurus", "model"]), max_size=3),
            "labels": st.lists(st.sampled_from(["accept", "reject", "abstain"]), max_size=4),
        }
    ),
    max_size=12,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(candidates=candidates)
def test_one_candidate_per_normalised_text_with_all_sources_and_labels(
    tmp_path: Path, candidates: list[dict[str, object]]
) -> None:
    name = f"prop-{next(_names)}"
    path = tmp_path / f"{name}.jsonl"
    path.write_text(json.dumps(record(candidates=candidates)) + "\n")

    benchmark_import(path_or_file=path, benchmark_name=name)

    expected: dict[str, tuple[set[str], list[str]]] = {}
    for candidate in candidates:
        sources, labels = expected.setdefault(normalize_candidate(str(candidate["text"])), (set(), []))
        sources.update(candidate["sources"])  # type: ignore[arg-type]
        labels.extend(candidate["labels"])  # type: ignore[arg-type]
    stored = {
        c.normalized: (c.sources, list(c.labels.order_by("position").values_list("value", flat=True)))
        for c in Candidate.objects.filter(target__benchmark__name=name)
    }
    assert stored == {key: (sorted(sources), labels) for key, (sources, labels) in expected.items()}
    assert not benchmark_import(path_or_file=path, benchmark_name=name).changed
