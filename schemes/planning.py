"""Per-target seeding that schemes share when they lay out a target's HITs (docs/design.md §3).

Randomness is one numpy Generator per target, seeded from the batch seed, the step and a key made
of the target's content (context digest, offset, word, part of speech), never from database ids:
the HITs of a target do not depend on which other targets are in the batch or on their order, and
two benchmarks built from the same data get the same HITs under the same seed.
"""

from __future__ import annotations

import hashlib

import numpy as np

_SEED_MODULUS = 2**64


def target_key(*, context_digest: str, offset: int, word: str, pos: str) -> str:
    """The key of a target by its content alone (what seeds its generator)."""
    return "\x1f".join((context_digest, str(offset), word, pos))


def target_rng(*, seed: int, step: int, key: str) -> np.random.Generator:
    """The generator of one target in one batch; any integer seed works (negative ones too)."""
    key_bits = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:16], "big")
    return np.random.default_rng(np.random.SeedSequence([seed % _SEED_MODULUS, step, key_bits]))


__all__ = ["target_key", "target_rng"]
