"""What the swords library checks when it loads a dataset (``LexSubDataset.from_dict``), as a test helper."""

from __future__ import annotations

import hashlib
import json
from typing import Any

POS_TAGS = {"ADJ", "ADV", "INTJ", "NOUN", "PROPN", "VERB", "ADP", "AUX", "CCONJ", "DET", "NUM", "PART", "PRON"}
LABELS = {"TRUE", "FALSE", "TRUE_IMPLICIT", "FALSE_IMPLICIT", "UNSURE"}


def _id(prefix: str, fields: dict[str, Any]) -> str:
    return prefix + hashlib.sha1(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def assert_loadable(data: dict[str, Any]) -> None:
    """Every id recomputes, every target sits at its offset, every substitute has labels."""
    assert isinstance(data["substitutes_lemmatized"], bool)
    for cid, context in data["contexts"].items():
        assert cid == _id("c:", {"context": context["context"]})
    for tid, target in data["targets"].items():
        assert target["pos"] in POS_TAGS
        fields = {k: target[k] for k in ("context_id", "offset", "pos")} | {"target": target["target"].lower()}
        assert tid == _id("t:", fields)
        text = data["contexts"][target["context_id"]]["context"]
        offset = target["offset"]
        assert text[offset : offset + len(target["target"])].lower() == target["target"].lower()
    for sid, substitute in data["substitutes"].items():
        assert substitute["target_id"] in data["targets"]
        assert sid == _id("s:", {"target_id": substitute["target_id"], "substitute": substitute["substitute"].lower()})
        labels = data["substitute_labels"][sid]
        assert labels and set(labels) <= LABELS
    assert set(data["substitute_labels"]) == set(data["substitutes"])
