"""Creating a batch loads none of the heavy libraries the platform uses elsewhere: a command that
generates HITs starts in a fraction of a second (docs/benchmarks.md, "Batch creation")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ["pandas", "pyarrow", "scipy", "sklearn", "nltk", "boto3", "matplotlib", "cairosvg"]

# What create_batch runs before its first query: the command, the generation services, WordNet's
# synonyms and lemmas, the distractor pool and a target's exclusions.
SCRIPT = """
import json, sys
import django
django.setup()
from django.core.management import load_command_class
load_command_class("hits", "create_batch")
import hits.services.generation
from annotation import wordnet
from schemes.swords import distractors, generation
texts = {"bright", *wordnet.synonyms(wordnet.lemmatize("brighter", pos="adj"), pos="adj")}
distractors.excluded_for(texts, pool=distractors.distractor_pool())
print(json.dumps(sorted(sys.modules)))
"""


def test_generating_hits_imports_no_pandas_pyarrow_scipy_nltk_or_boto3() -> None:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=environment, capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(completed.stdout.strip().splitlines()[-1]))
    assert "schemes.swords.distractors" in loaded and "numpy" in loaded
    assert sorted(module for module in HEAVY if module in loaded) == []
