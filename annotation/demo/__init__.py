"""The demo benchmark and accounts that ``make run`` loads (``manage.py load_demo``).

demo.jsonl is our own writing: 14 short contexts, each with one target and 20 to 35 candidates
from two sources, ``coinco`` (what people proposed) and ``thesaurus`` (every sense of the word).
The passwords are public on purpose: the demo is for trying the platform on your own machine.
"""

from dataclasses import dataclass
from pathlib import Path

DEMO_FILE = Path(__file__).with_name("demo.jsonl")
DEMO_BENCHMARK = "demo"
DEMO_TITLE = "Demo: fourteen everyday words in context"


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    researcher: bool


DEMO_ACCOUNTS = (
    DemoAccount("researcher", "demo-researcher-pass", researcher=True),
    DemoAccount("annotator1", "demo-annotator1-pass", researcher=False),
    DemoAccount("annotator2", "demo-annotator2-pass", researcher=False),
)
