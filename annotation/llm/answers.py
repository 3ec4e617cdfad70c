"""Reading a model's answer into substitutes (docs/candidates.md, "Answers").

The platform asks for ``{"substitutes": [...]}``. It also takes a bare JSON list, either inside a
code fence or amid other text, items that are objects naming the word (``word``, ``substitute``,
``text``), and, when no JSON is found, a numbered, bulleted, or comma- or semicolon-separated list.
What cannot be a substitute is said, item by item: empty, no letter, too long, several lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from annotation.models import normalize_candidate

#: Longest text taken as one substitute; a longer one is a sentence, not a substitute.
MAX_SUBSTITUTE_CHARACTERS = 100
#: Most words taken as one substitute (phrasal ones such as "make up one's mind" have four);
#: more is a sentence: a refusal or an explanation, not a substitute.
MAX_SUBSTITUTE_WORDS = 6
#: Keys of an item object that name its word.
WORD_KEYS = ("substitute", "word", "text", "candidate", "term")

_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•]|\(\d+\))\s*")
_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"


@dataclass
class ParsedAnswer:
    """The substitutes of an answer in its order (each once), and what was set aside, in words."""

    substitutes: list[tuple[str, str]] = field(default_factory=list)  # (text, raw item)
    unusable: list[str] = field(default_factory=list)
    repeated: int = 0
    target_itself: int = 0
    beyond_count: int = 0
    format: str = "json"


def _json_items(text: str) -> list[Any] | None:
    """The answer's list of items, read as JSON: the whole text, a fenced block, or the first
    balanced object or list in it; None when none of them is JSON of a known shape."""
    candidates = [text, *_FENCE.findall(text)]
    for opener in "{[":
        start = text.find(opener)
        if start >= 0:
            candidates.append(text[start:])
    decoder = json.JSONDecoder()
    for candidate in candidates:
        stripped = candidate.strip()
        if not stripped or stripped[0] not in "{[":
            continue
        try:
            found, _ = decoder.raw_decode(stripped)
        except ValueError:
            continue
        if isinstance(found, list):
            return found
        if isinstance(found, dict):
            for key in ("substitutes", "candidates", "words", "synonyms"):
                if isinstance(found.get(key), list):
                    return list(found[key])
            lists = [value for value in found.values() if isinstance(value, list)]
            if len(lists) == 1:
                return list(lists[0])
    return None


def _list_items(text: str) -> list[str]:
    """A numbered or bulleted list (one item a line), else items separated by commas or semicolons."""
    lines = [line for line in text.splitlines() if line.strip()]
    numbered = [line for line in lines if _NUMBERING.match(line)]
    if len(numbered) >= 2 or (numbered and len(lines) == 1):
        return [_NUMBERING.sub("", line) for line in numbered]
    if len(lines) == 1:
        return re.split(r"[,;]", lines[0])
    return lines


def _item_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in WORD_KEYS:
            if isinstance(item.get(key), str):
                return str(item[key])
    if isinstance(item, list) and item and isinstance(item[0], str):
        return item[0]  # [substitute, score], as result files write them
    return None


def _clean(text: str) -> str:
    text = _NUMBERING.sub("", text.strip())
    text = text.strip().strip(_QUOTES).strip()
    # A trailing full stop or comma is punctuation of the list, not of the word.
    return re.sub(r"[.,;:!?]+$", "", text).strip()


def answer_parse(text: str, *, target: str, count: int) -> ParsedAnswer:
    """The substitutes of an answer: at most ``count``, each once, the target itself left out."""
    items = _json_items(text)
    parsed = ParsedAnswer()
    if items is None:
        parsed.format = "list"
        stripped = text.strip()
        if "\n" not in stripped and len(stripped.split()) > MAX_SUBSTITUTE_WORDS and stripped[-1:] in ".!?":
            # One sentence of prose (a refusal, an explanation): its commas do not make a list.
            parsed.unusable.append(f"{stripped[:80]!r}: a sentence, not a list of substitutes")
            return parsed
        items = _list_items(text)
    own = normalize_candidate(target)
    seen: set[str] = set()
    for item in items:
        raw = _item_text(item)
        shown = json.dumps(item, ensure_ascii=False)[:80]
        if raw is None:
            parsed.unusable.append(f"{shown}: not a word")
            continue
        if "\n" in raw.strip():
            parsed.unusable.append(f"{shown}: several lines")
            continue
        cleaned = _clean(raw)
        if not cleaned or not any(character.isalpha() for character in cleaned):
            parsed.unusable.append(f"{shown}: no word in it")
            continue
        if len(cleaned) > MAX_SUBSTITUTE_CHARACTERS:
            parsed.unusable.append(f"{shown}: longer than {MAX_SUBSTITUTE_CHARACTERS} characters")
            continue
        if len(cleaned.split()) > MAX_SUBSTITUTE_WORDS:
            parsed.unusable.append(f"{shown}: more than {MAX_SUBSTITUTE_WORDS} words")
            continue
        key = normalize_candidate(cleaned)
        if key == own:
            parsed.target_itself += 1
            continue
        if key in seen:
            parsed.repeated += 1
            continue
        if len(parsed.substitutes) >= count:
            parsed.beyond_count += 1
            continue
        seen.add(key)
        parsed.substitutes.append((cleaned, raw))
    return parsed
