"""Evaluating a system's output against a benchmark: the interface a scheme's evaluation
implements, and the registry that finds it (docs/evaluation.md).

A scheme offers an evaluation by registering a :class:`SystemEvaluator` from its ``evaluation``
plug-in (``schemes/<name>/evaluation.py``, or a package of that name, loaded by ``analysis.apps``):
the format of a system's result file and its parser, the figures and their order, the
leaderboard's columns and main figure, and the evaluation itself. The page, the API, the command,
the saved evaluations and the leaderboard call the evaluator and name no scheme; a benchmark whose
scheme registers none is not evaluated (its page and API answer 404, the command refuses).
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from annotation.models import Benchmark


#: What a parser reads: a binary stream (text streams are taken too: a parser decodes bytes itself).
ResultStream: TypeAlias = IO[bytes] | IO[str] | io.IOBase


class ResultError(ValueError):
    """A result file that cannot be evaluated against the benchmark (the message says where)."""


@dataclass(frozen=True)
class Figure:
    """One figure of an evaluation: its JSON name, its title in text (the command) and in HTML
    (the page; plain text when not given), and the decimals it is shown with (0: a count)."""

    name: str
    title: str
    html: str = ""
    decimals: int = 2

    @property
    def heading(self) -> str:
        """The page's heading of the figure (HTML the evaluator wrote, not user input)."""
        return self.html or self.title


@dataclass(frozen=True)
class BenchmarkVersion:
    """Which candidates and labels a benchmark held at a moment (docs/evaluation.md, "Versions"):
    every candidate with an id up to ``candidates_through`` and every label up to
    ``labels_through``, ``candidates`` and ``labels`` of them. Ids only grow, so two numbers fix
    what an evaluation saw, whatever the size of the benchmark."""

    candidates_through: int = 0
    labels_through: int = 0
    candidates: int = 0
    labels: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "candidates_through": self.candidates_through,
            "labels_through": self.labels_through,
            "candidates": self.candidates,
            "labels": self.labels,
        }

    @classmethod
    def from_dict(cls, value: dict[str, Any] | None) -> BenchmarkVersion | None:
        if not value:
            return None
        keys = ("candidates_through", "labels_through", "candidates", "labels")
        return cls(**{key: int(value.get(key, 0)) for key in keys})

    def __str__(self) -> str:
        return f"{self.candidates:,} candidates, {self.labels:,} labels"


@dataclass(frozen=True)
class EvaluationOptions:
    """What the researcher asked for: each target's own figures as well, only one split's targets,
    the benchmark as it stood at an earlier ``version`` (None: as it stands now)."""

    per_target: bool = False
    split: str | None = None
    version: BenchmarkVersion | None = None


@dataclass(frozen=True)
class BootstrapOptions:
    """Bootstrap confidence intervals over targets: ``resamples`` draws of the targets with
    replacement from a generator seeded with ``seed``, the central ``level`` of them."""

    resamples: int
    seed: int
    level: float


#: The settings of a complete evaluation, in the order a report lists them (docs/evaluation.md).
LENIENT, STRICT, COMPLETE = "lenient", "strict", "complete"
COMPLETE_SETTINGS = (LENIENT, STRICT, COMPLETE)


class SystemEvaluator(ABC):
    """What a scheme's evaluation declares and does.

    ``evaluate`` and ``oracle`` return the figures by their JSON names (every name of ``figures``;
    ``per_target`` adds a ``"per_target"`` entry when the scheme has figures per target).
    """

    #: The scheme whose benchmarks it evaluates.
    scheme: str
    #: The result format's name, and what it looks like (the page's and the API's help, the command's).
    format_name: str
    format_help: str
    #: Every figure, in the order of the page's table, the command's output and the JSON.
    figures: tuple[Figure, ...]
    #: The names of the figures the leaderboard shows, in its column order.
    leaderboard: tuple[str, ...]
    #: The figure the leaderboard ranks systems by, highest first.
    main_figure: str

    @abstractmethod
    def parse(self, stream: ResultStream, *, file: str) -> Any:
        """A result file, read from a stream (decompressed already; binary, or text), as the value
        ``evaluate`` takes; a malformed file is a ``ResultError`` naming ``file`` and the line and field (or the
        entry) at fault."""

    @abstractmethod
    def evaluate(self, benchmark: Benchmark, parsed: Any, options: EvaluationOptions) -> dict[str, Any]:
        """The figures of a parsed result against the benchmark (or ``options.split`` of it); a
        result naming what the benchmark lacks is a ``ResultError``."""

    def oracle(self, benchmark: Benchmark, options: EvaluationOptions) -> dict[str, Any] | None:
        """The figures of the benchmark judged by itself, the leaderboard's first row; None: no such row."""
        return None

    #: Whether the evaluation can send a system's unscored substitutes to the crowd and score it
    #: completely (``unscored`` and ``complete`` are then implemented), and, when it cannot, why.
    judges_unscored: bool = False
    judging_refusal: str = "its evaluation does not score candidates judged by the crowd"
    #: The figures of a complete evaluation, each given in every one of ``COMPLETE_SETTINGS``.
    complete_figures: tuple[Figure, ...] = ()

    def unscored(self, benchmark: Benchmark, parsed: Any, *, top_k: int, split: str | None) -> dict[int, list[str]]:
        """The system's top-``top_k`` substitutes per target (by the target's id) that the benchmark
        has not scored and has no candidate for (compared normalised as the evaluation compares
        them), in the system's order and spelling."""
        raise NotImplementedError

    def complete(
        self,
        benchmark: Benchmark,
        parsed: Any,
        *,
        before: BenchmarkVersion,
        after: BenchmarkVersion,
        split: str | None,
        bootstrap: BootstrapOptions,
    ) -> dict[str, Any]:
        """The lenient and strict figures on the benchmark as it stood ``before`` the judging and the
        complete ones ``after`` it: ``{"figures": {setting: {name: value}}, "intervals": {setting:
        {name: [low, high]}}}`` for every figure of ``complete_figures``."""
        raise NotImplementedError

    def figure(self, name: str) -> Figure:
        return next(figure for figure in self.figures if figure.name == name)


_EVALUATORS: dict[str, SystemEvaluator] = {}


def register_evaluator(evaluator: SystemEvaluator) -> SystemEvaluator:
    """Offer the evaluation of ``evaluator.scheme``'s benchmarks; registering a scheme again replaces it."""
    names = {figure.name for figure in evaluator.figures}
    if len(names) != len(evaluator.figures):
        raise ValueError(f"the figures of the {evaluator.scheme!r} evaluation repeat a name")
    unknown = {*evaluator.leaderboard, evaluator.main_figure} - names
    if evaluator.judges_unscored and not evaluator.complete_figures:
        raise ValueError(f"the {evaluator.scheme!r} evaluation judges unscored substitutes but names no figure of it")
    if unknown:
        raise ValueError(f"the {evaluator.scheme!r} evaluation has no figure {', '.join(sorted(unknown))}")
    _EVALUATORS[evaluator.scheme] = evaluator
    return evaluator


def unregister_evaluator(scheme: str) -> None:
    _EVALUATORS.pop(scheme, None)


def scheme_evaluator(benchmark: Benchmark) -> SystemEvaluator | None:
    """The evaluation the benchmark's scheme registers, or None."""
    return _EVALUATORS.get(benchmark.scheme)


def offers_evaluation(benchmark: Benchmark) -> bool:
    """Whether the benchmark's scheme registers a system evaluation."""
    return benchmark.scheme in _EVALUATORS
