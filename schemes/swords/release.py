"""A released SWORDS benchmark's labels for the replay crowd (docs/design.md §13, ``review.replay``).

Keyed as the SWORDS import keys a benchmark's rows: the target's SWORDS id (``Target.external_id``)
and the substitute's normalised text (``Candidate.normalized``); the values are the released labels
as accept / reject / abstain, in the file's order.
"""

from __future__ import annotations

import os

from annotation.importers.reading import open_binary, source_name
from schemes.base import ReplaySource, SchemeSettings
from schemes.swords.formats import parse_swords
from schemes.swords.settings import SwordsSettings


def released_labels(path: str | os.PathLike[str]) -> dict[tuple[str, str], tuple[str, ...]]:
    """(SWORDS target id, normalised substitute) -> its released label values, from a SWORDS JSON
    file (gzipped or not); a malformed file raises ``ImportFailed`` naming file, item and field."""
    name = source_name(path)
    labels: dict[tuple[str, str], tuple[str, ...]] = {}
    with open_binary(path, file=name) as stream:
        swords = parse_swords(stream, file=name)
        for record in swords.records():
            if record.word is None:
                continue
            for candidate in record.candidates:
                key = (record.external_id, candidate.normalized)
                labels[key] = labels.get(key, ()) + tuple(str(label.value) for label in candidate.labels)
    return labels


def stops_early(settings: SchemeSettings) -> bool:
    """Whether a candidate may leave its rounds before the design's maximum: under every stopping
    policy but SWORDS's own rule, whose candidates are asked for step 2's labels and, once passed, all ten."""
    assert isinstance(settings, SwordsSettings)
    return settings.stopping_policy != "swords"


REPLAY = ReplaySource(read=released_labels, stops_early=stops_early)
