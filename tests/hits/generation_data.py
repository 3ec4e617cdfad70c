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


# Real words, so that the distractor exclusions (inflections, lemmas, WordNet synonyms) matter.
PINNED_WORDS = [
    ("bright", "adj"), ("run", "verb"), ("house", "noun"), ("quickly", "adv"), ("light", "noun"),
    ("clear", "adj"), ("strong", "adj"), ("open", "verb"), ("heavy", "adj"), ("carry", "verb"),
    ("river", "noun"), ("gently", "adv"), ("sharp", "adj"), ("build", "verb"), ("stone", "noun"),
    ("quiet", "adj"), ("follow", "verb"), ("garden", "noun"), ("rarely", "adv"), ("warm", "adj"),
]  # fmt: skip
PINNED_VOCABULARY = [
    *SAT_CANDIDATES, *BRIGHT_CANDIDATES, "home", "dwelling", "cottage", "lamp", "glow", "shine", "lucid",
    "plain", "mighty", "robust", "unlock", "weighty", "bear", "haul", "stream", "creek", "softly", "keen",
    "erect", "rock", "calm", "silent", "pursue", "chase", "yard", "seldom", "hot", "cozy", "dash", "sprint",
    "manage", "operate", "abode", "beam", "tote", "brook", "tenderly", "pointed", "construct", "pebble",
]  # fmt: skip
PINNED_SIZES = [1, 9, 10, 11, 19, 20, 21, 35, 3, 47]


def pinned_specs() -> list[TargetSpec]:
    """Twenty targets with 1 to 47 candidates from a fixed vocabulary, one of them the target's own
    word: built without randomness, so their HITs under one seed can be pinned."""
    specs = []
    for i, (word, pos) in enumerate(PINNED_WORDS):
        size = PINNED_SIZES[i % len(PINNED_SIZES)]
        texts = [PINNED_VOCABULARY[(i * 7 + j * 3) % len(PINNED_VOCABULARY)] for j in range(size)]
        texts = list(dict.fromkeys(texts))
        if i == 5:
            texts.append(word)
        specs.append(TargetSpec(f"Sentence {i}: a {word} one.", word, pos, word, texts))
    return specs
