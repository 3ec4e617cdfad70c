"""What every parser yields: one target with its context and candidates, already validated.

Parsers turn a file into a stream of :class:`TargetRecord`; the writer stores the stream. Keeping
the records plain lets the three formats share one writer, and so one set of merge rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from annotation.importers.errors import ImportFailed, shown
from annotation.models import LabelValue, PartOfSpeech, normalize_candidate

CEFR_LEVELS = ("A1", "A2", "B1", "B2", "C1", "C2")


@dataclass(frozen=True, slots=True)
class Where:
    """A place in an input file, for error messages: a line, or an item id for SWORDS JSON."""

    file: str
    line: int | None = None
    item: str | None = None

    def error(self, message: str, field: str | None = None) -> ImportFailed:
        return ImportFailed(message, file=self.file, line=self.line, item=self.item, field=field)

    def check_length(self, text: str, field: str, setting: str) -> None:
        """Refuse ``text`` when it is longer than the limit the setting named ``setting`` holds
        (IMPORT_MAX_TEXT_LENGTH and its kin, read at each call: docs/formats.md, "Limits"), or when
        it hides a character that changes how it reads without being seen (``hidden_control``).
        Every imported context, target, lemma, candidate and id passes through here."""
        limit: int = getattr(settings, setting)
        if len(text) > limit:
            raise self.error(f"{len(text):,} characters, over {setting} ({limit:,})", field)
        problem = hidden_control(text)
        if problem is not None:
            raise self.error(problem, field)


@dataclass(frozen=True, slots=True)
class LabelRecord:
    """An imported label; ``step`` 0 means SWORDS's split (the first ``step2_labels`` in step 2, the
    rest in step 3), another number is the scheme's step the file's labels belong to."""

    value: LabelValue
    raw_value: str
    step: int = 0


@dataclass(slots=True)
class CandidateRecord:
    text: str
    normalized: str
    sources: list[str]
    labels: list[LabelRecord]
    where: Where
    external_id: str = ""
    cefr: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class TargetRecord:
    """One target in its context. ``word`` is None for a context without targets (SWORDS allows them)."""

    where: Where
    context_text: str
    word: str | None
    offset: int = 0
    pos: str = ""
    lemma: str = ""
    cefr: str = ""
    candidates: list[CandidateRecord] = field(default_factory=list)
    context_external_id: str = ""
    context_extra: dict[str, Any] = field(default_factory=dict)
    external_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# Our own files name the part of speech in words; SWORDS uses Universal Dependencies tags.
_OWN_POS = {
    "noun": PartOfSpeech.NOUN,
    "verb": PartOfSpeech.VERB,
    "adj": PartOfSpeech.ADJECTIVE,
    "adjective": PartOfSpeech.ADJECTIVE,
    "adv": PartOfSpeech.ADVERB,
    "adverb": PartOfSpeech.ADVERB,
}
SWORDS_POS = {
    "NOUN": PartOfSpeech.NOUN,
    # A proper noun is judged like any noun (annotators are told to reject substitutes for names).
    "PROPN": PartOfSpeech.NOUN,
    "VERB": PartOfSpeech.VERB,
    "ADJ": PartOfSpeech.ADJECTIVE,
    "ADV": PartOfSpeech.ADVERB,
}
# SWORDS label names (swords.Label); the *_IMPLICIT ones were inferred in older benchmarks.
SWORDS_LABELS = {
    "TRUE": LabelValue.ACCEPT,
    "TRUE_IMPLICIT": LabelValue.ACCEPT,
    "FALSE": LabelValue.REJECT,
    "FALSE_IMPLICIT": LabelValue.REJECT,
    "UNSURE": LabelValue.ABSTAIN,
}
# Own formats: the words, or ProLex's 1 / -1 / 0.
_OWN_LABELS = {
    "accept": LabelValue.ACCEPT,
    "reject": LabelValue.REJECT,
    "abstain": LabelValue.ABSTAIN,
    "1": LabelValue.ACCEPT,
    "-1": LabelValue.REJECT,
    "0": LabelValue.ABSTAIN,
}


# PostgreSQL stores neither NUL characters nor lone surrogates (which only JSON escapes can make).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_text(text: str) -> str | None:
    """Why the database cannot store the text, or None when it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character, which cannot be stored"
    return f"contains a lone surrogate {shown(found.group())} (half of a UTF-16 pair), which is not text"


# Characters refused in imported text (docs/formats.md, "Invisible characters"): the bidirectional
# embeddings, overrides and isolates, which reorder how the text around them is shown (a candidate
# can read as another word, "Trojan Source"), and the zero-width characters that no script needs
# (zero width space, word joiner, zero width no-break space). The joiners U+200C and U+200D, needed
# inside Persian, Indic and emoji text, and the directional marks U+200E, U+200F, U+061C, which
# reorder nothing, are kept.
HIDDEN_CONTROLS = {
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "POP DIRECTIONAL FORMATTING",
    "\u202d": "LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2067": "RIGHT-TO-LEFT ISOLATE",
    "\u2068": "FIRST STRONG ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
    "\u200b": "ZERO WIDTH SPACE",
    "\u2060": "WORD JOINER",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE",
}
_HIDDEN = re.compile("[" + "".join(HIDDEN_CONTROLS) + "]")


def hidden_control(text: str) -> str | None:
    """Why the text is refused for a hidden control character, or None when it has none."""
    found = _HIDDEN.search(text)
    if found is None:
        return None
    char = found.group()
    kind = (
        "a bidirectional control"
        if char in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        else "an invisible character"
    )
    return (
        f"contains U+{ord(char):04X} {HIDDEN_CONTROLS[char]} at character {found.start() + 1}, {kind} that"
        " changes how the text reads without being seen; remove it"
    )


def candidate_text(text: str, where: Where, field: str) -> str:
    """The normalised form of a candidate's text, refusing an empty or overlong candidate."""
    normalized = normalize_candidate(text)
    if not normalized:
        raise where.error("empty candidate", field)
    # Case folding can lengthen text ("ß" becomes "ss"), and both columns have the same limit.
    where.check_length(max(text, normalized, key=len), field, "IMPORT_MAX_CANDIDATE_LENGTH")
    return normalized


def own_pos(raw: object, where: Where, field: str = "pos") -> str:
    if not isinstance(raw, str) or raw.strip().lower() not in _OWN_POS:
        raise where.error(f"unknown part of speech {shown(raw)} (use noun, verb, adj or adv)", field)
    return _OWN_POS[raw.strip().lower()].value


def swords_pos(raw: object, where: Where, field: str = "pos") -> str:
    if not isinstance(raw, str) or raw not in SWORDS_POS:
        raise where.error(f"unknown part of speech {shown(raw)} (expected one of {', '.join(SWORDS_POS)})", field)
    return SWORDS_POS[raw].value


def own_label(raw: object, where: Where, field: str = "labels") -> LabelRecord:
    # bool is an int subclass: True must not pass as the label 1.
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str) or raw.strip().lower() not in _OWN_LABELS:
        raise where.error(f"unknown label value {shown(raw)} (use accept, reject, abstain or 1, -1, 0)", field)
    return LabelRecord(value=_OWN_LABELS[raw.strip().lower()], raw_value=raw.strip())


# Shared, immutable: a SWORDS file has hundreds of thousands of labels and five distinct ones.
_SWORDS_LABEL_RECORDS = {raw: LabelRecord(value=value, raw_value=raw) for raw, value in SWORDS_LABELS.items()}


def swords_label(raw: object, where: Where, field: str = "substitute_labels") -> LabelRecord:
    record = _SWORDS_LABEL_RECORDS.get(raw) if isinstance(raw, str) else None
    if record is None:
        raise where.error(f"unknown label value {shown(raw)} (expected one of {', '.join(SWORDS_LABELS)})", field)
    return record


def cefr_level(raw: object, where: Where, field: str) -> str:
    if raw is None or raw == "":
        return ""
    if not isinstance(raw, str) or raw.strip().upper() not in CEFR_LEVELS:
        raise where.error(f"unknown CEFR level {shown(raw)} (use A1, A2, B1, B2, C1 or C2)", field)
    return raw.strip().upper()


def source_names(raw: object, where: Where, field: str = "sources") -> list[str]:
    """Sorted, de-duplicated source names; missing sources mean none."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise where.error("sources must be a list of names", field)
    return sorted({item.strip() for item in raw if item.strip()})


def check_offset(context: str, word: str, offset: object, where: Where, field: str = "offset") -> int:
    """The offset must point at the word exactly (docs/design.md §2: text[offset:offset+len(word)] == word)."""
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise where.error(f"offset must be a non-negative integer, not {shown(offset)}", field)
    found = context[offset : offset + len(word)]
    if found != word:
        raise where.error(
            f"offset {shown(offset)} does not point at {shown(word)} in the context (found {shown(found)})", field
        )
    return offset
