import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.swords import (
    SwordsEncoder,
    context_id,
    label_list,
    label_name,
    render,
    substitute_id,
    substitute_object,
    target_id,
)

# Ids of the first target of the public SWORDS v1.1 dev file and one of its substitutes.
CONTEXT = (
    "Kim:\n\t\t\t\tI have completed the invoices for April, May and June and we owe\n\t\t\t\t\tPasadena each "
    "month for a total of $3,615,910.62. I am waiting to hear\n\t\t\t\t\tback from Patti on May and June to "
    "make sure they are okay with her."
)


def test_ids_are_computed_as_the_swords_library_computes_them() -> None:
    cid = context_id(CONTEXT)
    assert cid == "c:c28336fbaeb6942c1454706a864cdf89c4535313"
    tid = target_id(context_id=cid, word="total", offset=105, pos="NOUN")
    assert tid == "t:7f1d26dea59df9f9cbf34e416ff89ede8e0f9aea"
    assert substitute_id(target_id=tid, text="entirety") == "s:6669e7e8eb3e2f080791f4f40f688b44947d020d"


def test_target_and_substitute_ids_ignore_case_but_context_ids_do_not() -> None:
    assert target_id(context_id="c:x", word="Let", offset=0, pos="VERB") == target_id(
        context_id="c:x", word="let", offset=0, pos="VERB"
    )
    assert substitute_id(target_id="t:x", text="All") == substitute_id(target_id="t:x", text="all")
    assert context_id("Let") != context_id("let")


def test_label_names_keep_imported_spellings() -> None:
    assert [label_name(v) for v in ("accept", "reject", "abstain")] == ["TRUE", "FALSE", "UNSURE"]
    assert label_name("accept", "TRUE_IMPLICIT") == "TRUE_IMPLICIT"


json_keys = st.text(max_size=3) | st.integers() | st.booleans() | st.none()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers() | st.booleans() | st.none(), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.text(max_size=4), json_values, max_size=4),
    st.dictionaries(st.text(max_size=4), json_values, max_size=4),
    st.booleans(),
)
def test_the_stream_is_byte_for_byte_what_json_dumps_writes(first: dict, second: dict, flag: bool) -> None:
    encoder = SwordsEncoder()
    pieces = [
        *encoder.mapping("contexts", iter(first.items())),
        *encoder.mapping("targets", iter(second.items())),
        encoder.value("substitutes_lemmatized", flag),
        encoder.close(),
    ]
    expected = json.dumps({"contexts": first, "targets": second, "substitutes_lemmatized": flag}, indent=2)
    assert "".join(pieces) == expected


def test_an_empty_object_and_a_closed_encoder() -> None:
    encoder = SwordsEncoder()
    assert encoder.close() == "{}"
    with pytest.raises(ValueError, match="closed"):
        encoder.value("x", 1)


def _library_id(prefix: str, fields: dict) -> str:
    return prefix + hashlib.sha1(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


@settings(max_examples=80, deadline=None)
@given(st.text(min_size=1), st.text(min_size=1), st.integers(0, 10**6), st.sampled_from(["NOUN", "VERB", None]))
def test_ids_equal_the_checksum_of_sorted_json(text: str, word: str, offset: int, pos: str | None) -> None:
    assert context_id(text) == _library_id("c:", {"context": text})
    assert target_id(context_id="c:1", word=word, offset=offset, pos=pos) == _library_id(
        "t:", {"context_id": "c:1", "target": word.lower(), "offset": offset, "pos": pos}
    )
    assert substitute_id(target_id="t:1", text=word) == _library_id(
        "s:", {"target_id": "t:1", "substitute": word.lower()}
    )


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text(), json_values, st.lists(st.sampled_from(["TRUE", "FALSE", "UNSURE"]), max_size=4))
def test_rendered_substitutes_and_labels_match_json_dumps(tid: str, text: str, extra: object, names: list) -> None:
    full = {"target_id": tid, "substitute": text, "extra": extra}
    assert substitute_object(target_id=tid, text=text, extra=render(extra, 3)) == render(full, 2)
    assert substitute_object(target_id=tid, text=text, extra=None) == render({"target_id": tid, "substitute": text}, 2)
    assert label_list(names) == render(names, 2)
    assert render(full, 2) == json.dumps(full, indent=2).replace("\n", "\n    ")
