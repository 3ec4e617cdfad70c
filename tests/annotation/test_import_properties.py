"""Properties of the merge rules, over generated candidate lists."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Candidate, normalize_candidate
from annotation.services import ImportFailed, benchmark_import
from tests.annotation.import_helpers import FIXTURES, record, row_counts

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


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
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


# Any JSON value, with what breaks storage: NUL characters, lone surrogates, NaN and Infinity; and
# values that are valid somewhere.
strings = st.text(
    st.characters(exclude_categories=[]) | st.sampled_from(["\x00", "\ud800"]), max_size=8
) | st.sampled_from(["calm", "adj", "ADJ", "accept", "TRUE", "coinco"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(strings, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def changed_somewhere(draw: st.DrawFn, data: object) -> object:
    """The data with one value, anywhere in it, replaced by any JSON value."""
    data = copy.deepcopy(data)
    parent, key = None, None
    node = data
    # Mostly down to a leaf, where the import reads text and numbers; sometimes a whole object.
    while isinstance(node, dict | list) and node and (parent is None or draw(st.integers(0, 5)) > 0):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]  # type: ignore[index]
    if parent is None:
        return draw(json_values)
    parent[key] = draw(json_values)  # type: ignore[index]
    return data


def _imported_or_refused_cleanly(path: Path) -> None:
    before = row_counts()
    try:
        benchmark_import(path_or_file=path, benchmark_name=f"prop-{next(_names)}")
    except ImportFailed as error:
        assert str(error).startswith(f"{path.name}") and str(error).isprintable()
        assert row_counts() == before


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=changed_somewhere(json.loads((FIXTURES / "swords_small.json").read_text())))
def test_any_value_anywhere_in_a_swords_file_is_imported_or_refused_cleanly(tmp_path: Path, data: object) -> None:
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(data))
    _imported_or_refused_cleanly(path)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=changed_somewhere(record()))
def test_any_value_anywhere_in_a_jsonl_record_is_imported_or_refused_cleanly(tmp_path: Path, data: object) -> None:
    path = tmp_path / "changed.jsonl"
    path.write_text(json.dumps(data) + "\n")
    _imported_or_refused_cleanly(path)
