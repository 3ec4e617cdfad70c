"""A fake panel: the crowd's own record of postings, submissions, payments, blocks and messages,
kept in memory, and a participant who takes a place and hands work in."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from itertools import count
from typing import Any


@dataclass
class Posting:
    hit_id: int
    batch_id: int
    places: int
    open: bool = True
    paused: bool = False


@dataclass
class Submission:
    id: str
    worker: str
    posting: str
    status: str = "Submitted"
    submitted_at: datetime | None = None


@dataclass
class Panel:
    postings: dict[str, Posting] = field(default_factory=dict)
    submissions: dict[str, Submission] = field(default_factory=dict)
    bonuses: dict[str, tuple[str, Decimal]] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)
    messages: list[tuple[str, str]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: count(1))

    def post(self, *, hit_id: int, batch_id: int, places: int) -> str:
        posting = f"P{next(self._ids)}"
        self.postings[posting] = Posting(hit_id=hit_id, batch_id=batch_id, places=places)
        self.calls.append(f"post {posting}")
        return posting

    def hand_in(self, *, submission: str, worker: str, posting: str, at: datetime) -> None:
        """The participant hands the work in on the panel (after saving it on the platform's page)."""
        self.submissions.setdefault(submission, Submission(id=submission, worker=worker, posting=posting))
        self.submissions[submission].submitted_at = at

    def reset(self) -> None:
        fresh = Panel()
        self.postings, self.submissions, self.bonuses = fresh.postings, fresh.submissions, fresh.bonuses
        self.blocked, self.messages, self.calls, self._ids = fresh.blocked, fresh.messages, fresh.calls, fresh._ids


PANEL = Panel()
