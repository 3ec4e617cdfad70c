"""The public SWORDS JSON format (Lee et al. 2021; the ``swords`` library's ``LexSubDataset.as_dict``).

Top level: ``contexts``, ``targets``, ``substitutes`` (objects keyed by id), ``substitutes_lemmatized``
and, for a dataset with labels, ``substitute_labels`` (substitute id -> labels in collection order).
Ids are ``c:``, ``t:``, ``s:`` + SHA-1 of ``json.dumps(fields, sort_keys=True)``.

What a faithful export needs back is stored with the rows (docs/formats.md, "SWORDS round trip"):
text, word and substitute as written, ids as ``external_id``, the original part-of-speech tag and
each object's ``extra`` under ``extra["swords"]``, file-level facts in ``Benchmark.extra["swords"]``.
Rows are created in file order, so ordering by id gives the file's order back.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from annotation.importers.errors import ImportFailed, shown
from annotation.importers.formats import ImportFormat, ParsedFile, register_import_format
from annotation.importers.json_stream import READ_BY_MEMBER, JsonText, ObjectReader
from annotation.importers.json_values import JsonValueError, field_name, load_json
from annotation.importers.reading import first_keys
from annotation.importers.records import (
    CandidateRecord,
    LabelRecord,
    TargetRecord,
    Where,
    candidate_text,
    source_names,
    swords_label,
    swords_pos,
)
from annotation.importers.report import IdMismatch, ImportReport

TOP_LEVEL = ("contexts", "targets", "substitutes", "substitutes_lemmatized")
# The top-level objects keyed by id: a problem inside one is named by its id.
KEYED_BY_ID = ("contexts", "targets", "substitutes", "substitute_labels")


def swords_id(prefix: str, fields: dict[str, Any]) -> str:
    """The id the swords library gives an object: prefix + SHA-1 of its key fields."""
    return prefix + hashlib.sha1(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def context_id(text: str) -> str:
    return swords_id("c:", {"context": text})


def target_id(*, context_id: str, target: str, offset: int, pos: str | None) -> str:
    return swords_id("t:", {"context_id": context_id, "target": target.lower(), "offset": offset, "pos": pos})


def substitute_id(*, target_id: str, substitute: str) -> str:
    # The text swords_id hashes, written out: this runs once per substitute.
    key = '{"substitute": ' + _quoted(substitute.lower()) + ', "target_id": ' + _quoted(target_id) + "}"
    return "s:" + hashlib.sha1(key.encode("utf-8")).hexdigest()


# How json.dumps writes a string (ensure_ascii, its default).
_quoted = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


@dataclass
class SwordsFile:
    """A parsed SWORDS file: file-level facts, and its targets as records in file order."""

    file: str
    data: dict[str, Any]
    substitutes_lemmatized: bool
    # Context id -> its target ids, target id -> its substitute ids, in file order.
    targets_of: dict[str, list[str]]
    substitutes_of: dict[str, list[str]]
    mismatches: list[IdMismatch] = field(default_factory=list)
    # Lists of label values seen -> their records (see _label_records).
    _known_labels: dict[tuple[Any, ...], list[LabelRecord]] = field(default_factory=dict, repr=False)
    # id of an extra that substitutes share (_Members) -> (that extra, kept so that its id is not
    # reused; the candidates' extra holding it). Candidates of one extra share one dict, which
    # the writer spells as JSON once (see _substitute).
    _shared_extras: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict, repr=False)

    @property
    def record_count(self) -> int:
        """Records :meth:`records` yields: one per target, one per context without targets."""
        return sum(len(targets) or 1 for targets in self.targets_of.values())

    @property
    def file_extra(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"substitutes_lemmatized": self.substitutes_lemmatized}
        if "extra" in self.data:
            facts["extra"] = self.data["extra"]
        return facts

    def records(self) -> Iterator[TargetRecord]:
        """Contexts in file order, each with its targets; a context without targets still yields one record."""
        contexts: dict[str, Any] = self.data["contexts"]
        targets: dict[str, Any] = self.data["targets"]
        substitutes: dict[str, Any] = self.data["substitutes"]
        labels: dict[str, Any] = self.data.get("substitute_labels", {})
        for cid, context in contexts.items():
            text = self._context_text(cid, context)
            expected = context_id(text)
            if expected != cid:
                self.mismatches.append(IdMismatch("context", cid, expected))
            context_extra = {"swords": {"extra": context["extra"]} if "extra" in context else {}}
            if not self.targets_of[cid]:
                yield TargetRecord(
                    where=Where(self.file, item=cid),
                    word=None,
                    context_text=text,
                    context_external_id=cid,
                    context_extra=context_extra,
                )
            for tid in self.targets_of[cid]:
                record = self._target(tid, targets[tid], text)
                record.context_external_id, record.context_extra = cid, context_extra
                # Each substitute is read once: what is read is let go, so the records' memory
                # replaces the file's instead of adding to it.
                record.candidates = [
                    self._substitute(sid, substitutes.pop(sid), labels.pop(sid, None), tid)
                    for sid in self.substitutes_of[tid]
                ]
                yield record

    def _context_text(self, cid: str, context: Any) -> str:
        context = _mapping(context, self.file, cid)
        if "context" not in context:
            raise ImportFailed("missing field", file=self.file, item=cid, field="context")
        text = context["context"]
        if not isinstance(text, str) or not text.strip():
            raise ImportFailed("must be a non-empty string", file=self.file, item=cid, field="context")
        Where(self.file, item=cid).check_length(text, "context", "IMPORT_MAX_TEXT_LENGTH")
        return text

    def _target(self, tid: str, target: dict[str, Any], text: str) -> TargetRecord:
        where = Where(self.file, item=tid)
        for key in ("target", "offset", "pos"):
            if key not in target:
                raise where.error("missing field", key)
        word, offset, raw_pos = target["target"], target["offset"], target["pos"]
        if not isinstance(word, str) or not word.strip():
            raise where.error("must be a non-empty string", "target")
        where.check_length(word, "target", "IMPORT_MAX_WORD_LENGTH")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise where.error(f"offset must be a non-negative integer, not {shown(offset)}", "offset")
        pos = swords_pos(raw_pos, where)
        expected = target_id(context_id=target["context_id"], target=word, offset=offset, pos=raw_pos)
        if expected != tid:
            self.mismatches.append(IdMismatch("target", tid, expected))
        found = text[offset : offset + len(word)]
        swords: dict[str, Any] = {"pos": raw_pos}
        if found != word:
            # The swords library matches targets case-insensitively; we store the text's spelling
            # (our invariant) and keep the file's for export.
            if found.lower() != word.lower():
                raise where.error(
                    f"offset {shown(offset)} does not point at {shown(word)} in the context (found {shown(found)})",
                    "offset",
                )
            swords["target"] = word
        if "extra" in target:
            swords["extra"] = target["extra"]
        extra = target.get("extra")
        lemma = extra.get("coinco_lemma") if isinstance(extra, dict) else None
        if isinstance(lemma, str):
            where.check_length(lemma, "extra.coinco_lemma", "IMPORT_MAX_WORD_LENGTH")
        return TargetRecord(
            where=where,
            word=found,
            offset=offset,
            pos=pos,
            lemma=lemma.strip() if isinstance(lemma, str) else "",
            external_id=tid,
            extra={"swords": swords},
            context_text=text,
        )

    def _label_records(self, raw_labels: list[Any], where: Where) -> list[LabelRecord]:
        """The labels of a substitute; lists of labels repeat (a few hundred distinct ones in the
        test split), and each is checked and converted once. The lists are shared: read only."""
        try:
            key = tuple(raw_labels)
            known = self._known_labels.get(key)
        except TypeError:  # a list or object among them: refused below
            key, known = None, None
        if known is not None:
            return known
        records = [swords_label(value, where) for value in raw_labels]
        if key is not None and len(key) <= _SHARED_LABELS:
            self._known_labels[key] = records
        return records

    def _substitute(self, sid: str, kept: Any, raw_labels: Any, tid: str) -> CandidateRecord:
        where = Where(self.file, item=sid)
        substitute = _expanded(kept)
        if "substitute" not in substitute:
            raise where.error("missing field", "substitute")
        text = substitute["substitute"]
        if not isinstance(text, str):
            raise where.error("must be a string", "substitute")
        normalized = candidate_text(text, where, "substitute")
        expected = substitute_id(target_id=tid, substitute=text)
        if expected != sid:
            self.mismatches.append(IdMismatch("substitute", sid, expected))
        extra = substitute.get("extra")
        sources = source_names(extra.get("sources") if isinstance(extra, dict) else None, where, "extra.sources")
        if raw_labels is None:
            raw_labels = []
        if not isinstance(raw_labels, list):
            raise where.error("labels must be a list", "substitute_labels")
        return CandidateRecord(
            text=text,
            normalized=normalized,
            sources=sources,
            labels=self._label_records(raw_labels, where),
            where=where,
            external_id=sid,
            extra=self._candidate_extra(kept, substitute),
        )

    def _candidate_extra(self, kept: Any, substitute: dict[str, Any]) -> dict[str, Any]:
        """What a candidate keeps of its substitute's extra; one dict for the candidates whose
        substitutes share an extra (those of the usual shape: none, or only their sources)."""
        if not isinstance(kept, _Substitute):
            return {"swords": {"extra": substitute["extra"]} if "extra" in substitute else {}}
        known = self._shared_extras.get(id(kept.extra))
        if known is None:
            wrapped = {"swords": {"extra": kept.extra} if kept.extra is not None else {}}
            known = self._shared_extras[id(kept.extra)] = (kept.extra, wrapped)
        return known[1]


def _mapping(value: Any, file: str, item: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ImportFailed(f"expected an object, found {type(value).__name__}", file=file, item=item)
    return value


def _children(
    parents: dict[str, Any], children: dict[str, Any], key: str, kind: str, file: str
) -> dict[str, list[str]]:
    """Parent id -> ids of the children that name it under ``key``, in file order."""
    found: dict[str, list[str]] = {parent: [] for parent in parents}
    for child_id, child in children.items():
        parent = child.target_id if isinstance(child, _Substitute) else _mapping(child, file, child_id).get(key)
        if parent is None:
            raise ImportFailed("missing field", file=file, item=child_id, field=key)
        if not isinstance(parent, str) or parent not in found:
            raise ImportFailed(f"unknown {kind} id {shown(parent)}", file=file, item=child_id, field=key)
        found[parent].append(child_id)
    return found


def _load(text: str, file: str) -> Any:
    try:
        return load_json(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"malformed JSON: {exc.msg} at column {exc.colno}", file=file, line=exc.lineno) from exc
    except JsonValueError as exc:
        raise _value_error(exc, file) from exc


def _value_error(exc: JsonValueError, file: str) -> ImportFailed:
    path = exc.path
    item: str | None = None
    field: str | None = field_name(path) or None
    if len(path) >= 2 and path[0] in KEYED_BY_ID:
        # Labels are named by their substitute's id, the field keeps the list index.
        rest = path[:1] + path[2:] if path[0] == "substitute_labels" else path[2:]
        item, field = str(path[1]), field_name(rest) or str(path[0])
    return ImportFailed(exc.message, file=file, line=exc.line, item=item, field=field)


class _Substitute(NamedTuple):
    """A substitute of the usual shape, kept small: a SWORDS file has tens of thousands."""

    target_id: str
    substitute: str
    extra: dict[str, Any] | None  # None: the substitute has no extra


_ABSENT = object()
# Label lists longer than this are kept as they are, not shared.
_SHARED_LABELS = 20


class _Members:
    """The keyed sections as they are read, kept compactly: ids that other objects name are
    shared, so are values that repeat (a substitute's extra holding only its sources, label
    lists), and a substitute of the usual shape is a tuple. What is shared is bounded by the
    distinct values, which do not grow with the file."""

    def __init__(self) -> None:
        self.sections: dict[str, dict[str, Any]] = {name: {} for name in KEYED_BY_ID}
        self._shared: dict[Any, Any] = {}

    def add(self, section: str, key: str, value: Any) -> bool:
        """Keep a member; True if its id came before in the section (the first is kept)."""
        entries = self.sections[section]
        if key in entries:
            return True
        if section == "substitutes":
            key, value = sys.intern(key), self._substitute(value)
        elif section == "substitute_labels":
            key, value = sys.intern(key), self._labels(value)
        elif section == "targets":
            key = sys.intern(key)
        entries[key] = value
        return False

    def _share(self, key: tuple[Any, ...], value: Any) -> Any:
        return self._shared.setdefault(key, value)

    def _substitute(self, value: Any) -> Any:
        if type(value) is not dict:
            return value
        target, text, extra = value.get("target_id"), value.get("substitute"), value.get("extra", _ABSENT)
        if len(value) != (2 if extra is _ABSENT else 3) or type(target) is not str or type(text) is not str:
            return value
        if extra is _ABSENT:
            return _Substitute(sys.intern(target), text, None)
        sources = extra.get("sources") if type(extra) is dict and len(extra) == 1 else None
        if type(sources) is not list:
            return value
        shared = self._shared_strings(("extra", *sources), extra)
        return value if shared is None else _Substitute(sys.intern(target), text, shared)

    def _labels(self, value: Any) -> Any:
        if type(value) is not list or len(value) > _SHARED_LABELS:
            return value
        shared = self._shared_strings(("labels", *value), value)
        return value if shared is None else shared

    def _shared_strings(self, key: tuple[Any, ...], value: Any) -> Any:
        """The value kept for ``key``, whose items after the first must all be strings; None if
        they are not. A key seen before is all strings (only strings equal strings), so only a
        new one is checked item by item."""
        try:
            shared = self._shared.get(key)
        except TypeError:  # a list or object among the items
            return None
        if shared is not None:
            return shared
        if not all(type(item) is str for item in key[1:]):
            return None
        return self._share(key, value)


def _expanded(value: Any) -> Any:
    """A substitute as the file has it."""
    if not isinstance(value, _Substitute):
        return value
    found: dict[str, Any] = {"target_id": value.target_id, "substitute": value.substitute}
    if value.extra is not None:
        found["extra"] = value.extra
    return found


def parse_swords(stream: io.BufferedIOBase, *, file: str, block_bytes: int | None = None) -> SwordsFile:
    """Read a SWORDS file member by member (docs/formats.md, "Scale"): the text is let go as it is
    read, and the members are kept compactly until every target has its substitutes and labels."""
    members = _Members()
    text = JsonText(stream, file=file, block_bytes=block_bytes)
    reader = ObjectReader(text, sections=KEYED_BY_ID, member=members.add)
    try:
        data = reader.read(whole=lambda whole: _load(whole, file))
    except JsonValueError as exc:
        raise _value_error(exc, file) from exc
    if isinstance(data, dict):
        for key, value in data.items():
            if value is READ_BY_MEMBER:
                data[key] = members.sections[key]
    if not isinstance(data, dict):
        raise ImportFailed("malformed SWORDS JSON: the top level must be an object", file=file, line=1)
    for key in TOP_LEVEL:
        if key not in data:
            raise ImportFailed("missing field at the top level", file=file, field=key)
    for key in ("contexts", "targets", "substitutes"):
        if not isinstance(data[key], dict):
            raise ImportFailed("must be an object keyed by id", file=file, field=key)
    labels = data.get("substitute_labels", {})
    if not isinstance(labels, dict):
        raise ImportFailed("must be an object keyed by substitute id", file=file, field="substitute_labels")
    if not isinstance(data["substitutes_lemmatized"], bool):
        raise ImportFailed("must be true or false", file=file, field="substitutes_lemmatized")
    for section in ("contexts", "targets", "substitutes"):
        for item in data[section]:
            if not item.strip():
                raise ImportFailed("an empty id", file=file, field=section)
            Where(file, item=item[:60]).check_length(item, section, "IMPORT_MAX_ID_LENGTH")
    for sid in labels:
        if sid not in data["substitutes"]:
            raise ImportFailed("labels for an unknown substitute id", file=file, item=sid, field="substitute_labels")
    return SwordsFile(
        file=file,
        data=data,
        substitutes_lemmatized=data["substitutes_lemmatized"],
        targets_of=_children(data["contexts"], data["targets"], "context_id", "context", file),
        substitutes_of=_children(data["targets"], data["substitutes"], "target_id", "target", file),
    )


def _parsed(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    """The whole file is parsed before anything is written: SWORDS JSON is one object."""
    swords = parse_swords(stream, file=file)

    def finish(report: ImportReport) -> None:
        for mismatch in swords.mismatches:
            report.add_mismatch(mismatch)

    return ParsedFile(records=swords.records(), total=swords.record_count, facts=swords.file_extra, finish=finish)


# Top-level keys of a SWORDS file (in any order); our JSONL lines are keyed "context", "target", ...
SWORDS_KEYS = frozenset({"contexts", "targets", "substitutes", "substitutes_lemmatized", "substitute_labels"})


def _sniff(head: bytes) -> bool:
    return head.startswith(b"{") and bool(SWORDS_KEYS.intersection(first_keys(head.decode("utf-8", errors="replace"))))


register_import_format(ImportFormat("swords", "SWORDS JSON", _parsed, sniff=_sniff))
