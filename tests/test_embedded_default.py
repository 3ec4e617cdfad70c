"""The embedded default (SQLite, what `make run` serves) takes the annotator's cycle through the
paths PostgreSQL does not: a claim in three statements without row locks, statements not prepared,
values not cast; the annotator's home and the researcher's candidates filtered by source. Run in a
subprocess on a fresh SQLite file: settings are read once per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

CYCLE = r"""
import json, re
import django
django.setup()
from django.core.management import call_command
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from annotation.models import Label
from hits.models import Assignment

call_command("migrate", verbosity=0)
call_command("load_demo", verbosity=0)
out = {}
browser = Client()
browser.force_login(User.objects.get(username="annotator1"))
claimed = browser.post("/work/next")
page = browser.get(claimed["Location"]).content.decode()
ids = sorted(set(re.findall(r'name="item-(\d+)"', page)))
submitted = browser.post(claimed["Location"], {**{f"item-{i}": "accept" for i in ids}, "seconds_on_page": "5"})
first = Assignment.objects.get(pk=int(claimed["Location"].rstrip("/").rsplit("/", 1)[1]))
out["html"] = [claimed.status_code, submitted.status_code, submitted["Location"] != claimed["Location"]]
out["stored"] = [first.status, first.submitted_at is not None, Label.objects.filter(assignment=first).count(), len(ids)]
out["done_line"] = re.search(r"HITs done:[^<]*", browser.get(submitted["Location"]).content.decode()).group(0)
out["home"] = browser.get("/work/").status_code

researcher = Client()
researcher.force_login(User.objects.get(username="researcher"))
out["candidates"] = [
    researcher.get(f"/benchmarks/demo/data/candidates/?source={source}").status_code
    for source in ("coinco", "thesaurus")
]

token = Token.objects.create(user=User.objects.get(username="annotator2"))
api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
claim = api.post("/api/work/claim", "{}", content_type="application/json").json()
answers = {str(item["id"]): "accept" for item in claim["items"]}
body = json.dumps({"answers": answers})
again = [api.post(f"/api/work/assignments/{claim['id']}/submit", body, content_type="application/json") for _ in (1, 2)]
out["api"] = [response.status_code for response in again] + [again[0].json() == again[1].json()]
out["api_labels"] = Label.objects.filter(assignment_id=claim["id"]).count()
print("RESULT " + json.dumps(out))
"""


def test_the_annotators_cycle_runs_on_the_embedded_default(tmp_path: Path) -> None:
    environment = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    environment.update(
        {
            "DJANGO_SETTINGS_MODULE": "crowdlex.settings",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "DEBUG": "1",
            "ALLOWED_HOSTS": "testserver",
            "DERIVED_CACHE_DIR": str(tmp_path / "cache"),
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", CYCLE],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    found = json.loads(lines[0].removeprefix("RESULT "))
    assert found["html"] == [302, 302, True]
    status, stamped, labels, items = found["stored"]
    # The demo's HITs hold two controls besides the candidates: labels for the candidates only.
    assert (status, stamped, labels) == ("submitted", True, items - 2)
    assert found["done_line"].startswith("HITs done: 1 this session, 1 in this batch")
    # The annotator's home lists the projects, and the researcher's candidates filter by source.
    assert found["home"] == 200
    assert found["candidates"] == [200, 200]
    assert found["api"] == [200, 200, True]
    assert found["api_labels"] > 0
