"""Small benchmarks for the generation tests, built the same way every time."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.models import Benchmark, Candidate, CandidateStage, Context, Target

# Enough candidates to give HITs of several sizes: 23 -> 8 + 8 + 7, 10 -> 10, 1 -> 1.
SAT_CANDIDATES = [
    "perched", "rested", "stood", "lay", "squatted", "settled", "lounged", "posed", "remained", "waited",
    "stayed", "crouched", "lingered", "knelt", "slouched", "sprawled", "reclined", "hunched", "loafed", "idled",
    "roosted", "nestled", "be seated",
]  # fmt: skip
BRIGHT_CANDIDATES = ["clever", "smart", "intelligent", "sharp", "brilliant", "quick", "gifted", "able", "wise", "keen"]


@dataclass
class TargetSpec:
    text: str
    word: str
    pos: str
    lemma: str
    candidates: list[str]
    stages: dict[str, str] = field(default_factory=dict)

    @property
    def offset(self) -> int:
        return self.text.index(self.word)


SPECS = [
    TargetSpec("The cat sat on the mat.", "sat", "verb", "sit", SAT_CANDIDATES),
    TargetSpec("She is a bright student.", "bright", "adj", "bright", BRIGHT_CANDIDATES),
    TargetSpec("He ran home quickly.", "quickly", "adv", "quickly", ["fast"]),
]


def build_benchmark(
    name: str, specs: list[TargetSpec] | None = None, *, reverse: bool = False, **settings: object
) -> Benchmark:
    """A benchmark with one context per spec; `reverse` inserts the targets in the opposite order."""
    benchmark = Benchmark.objects.create(name=name, **settings)
    chosen = list(SPECS if specs is None else specs)
    for spec in reversed(chosen) if reverse else chosen:
        context = Context.objects.create(benchmark=benchmark, text=spec.text)
        target = Target.objects.create(
            context=context, benchmark=benchmark, word=spec.word, offset=spec.offset, pos=spec.pos, lemma=spec.lemma
        )
        texts = list(reversed(spec.candidates)) if reverse else spec.candidates
        for text in texts:
            Candidate.objects.create(target=target, text=text, stage=spec.stages.get(text, CandidateStage.REDUCE))
    return benchmark


def layout(benchmark: Benchmark, *, step: int = 2) -> list[tuple[str, int, int, list[tuple[str, str]]]]:
    """The HITs of a benchmark's batches, free of database ids: (target, offset, part, items in order)."""
    from hits.models import HIT

    hits = HIT.objects.filter(batch__benchmark=benchmark, batch__step=step).select_related("target")
    return sorted(
        (hit.target.word, hit.target.offset, hit.part, [(item.kind, item.text) for item in hit.items.all()])
        for hit in hits.prefetch_related("items")
    )
