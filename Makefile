# crowdlex: `make run` serves the platform with demo data; `make test` runs every check.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The test suite runs against PostgreSQL (SQLite ignores row locks); override to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
PYTEST_ARGS ?=
LOCK_ARGS ?=
# The browser tests drive Debian's chromium (tests/browser.py); Playwright never downloads a browser.
CHROMIUM := /usr/bin/chromium
# Scripts the browser tests load into pages (axe-core), from the npm registry at the locked versions.
BROWSER_ASSETS := tests/browser_assets
AXE := $(BROWSER_ASSETS)/node_modules/axe-core/axe.min.js
# One lock for every platform and Python from 3.11 on, with the hash of every file pip may take.
LOCK := $(BIN)/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes --custom-compile-command "make lock"

# WordNet 3.0 (evaluation, WordNet candidates, distractors) is Debian's wordnet-base, read offline (annotation/wordnet).
WORDNET := /usr/share/wordnet/index.noun

# Plots as PNG (analysis/plot_files.py): cairosvg draws them with Debian's libcairo2.
LIBCAIRO := /usr/lib/$(shell uname -m)-linux-gnu/libcairo.so.2

.PHONY: run test links lint typecheck chromium browser-assets wordnet libcairo pytest bench runtime venv lock clean

# Two stamps: `make run` needs the runtime lock alone (.runtime); the checks and tests add the
# development lock (.installed), which includes the runtime's pins. Each is redone when its lock moves.
$(BIN)/.runtime: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.txt
	touch $@

$(BIN)/.installed: $(BIN)/.runtime requirements-dev.txt
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.txt
	touch $@

runtime: $(BIN)/.runtime

venv: $(BIN)/.installed

# After changing requirements.in or requirements-dev.in; `make lock LOCK_ARGS=--upgrade` also moves
# every package that no .in file pins to its newest release. The dev lock keeps the runtime versions.
lock: venv
	$(LOCK) $(LOCK_ARGS) requirements.in -o requirements.txt
	$(LOCK) $(LOCK_ARGS) requirements-dev.in --constraints requirements.txt -o requirements-dev.txt

# The embedded default is a development server: DEBUG is off unless set (crowdlex/settings.py).
run: export DEBUG ?= 1
run: runtime wordnet libcairo
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver 127.0.0.1:8000

test: links lint typecheck pytest

links:
	.ci/check-links

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv
	$(BIN)/mypy .

# A green run includes the browser tests: chromium is installed here when root may use apt, else named.
chromium:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "The browser tests need Debian's chromium at $(CHROMIUM): sudo apt-get install chromium" >&2; exit 1; \
	  fi; }

# npm ci installs exactly the lock file; as root with apt, npm itself is installed first where missing.
$(AXE): $(BROWSER_ASSETS)/package.json $(BROWSER_ASSETS)/package-lock.json
	@command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
	  else \
	    echo "The browser tests need npm to install axe-core: sudo apt-get install npm" >&2; exit 1; \
	  fi; }
	cd $(BROWSER_ASSETS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

browser-assets: $(AXE)

# WordNet likewise: installed here when root may use apt, else the command is named.
wordnet:
	@test -f $(WORDNET) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base >/dev/null; \
	  else \
	    echo "WordNet 3.0 is needed at $(dir $(WORDNET)): sudo apt-get install wordnet-base" >&2; exit 1; \
	  fi; }

# libcairo2 likewise: installed here when root may use apt, else the command is named.
libcairo:
	@test -f $(LIBCAIRO) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libcairo2 >/dev/null; \
	  else \
	    echo "PNG plots need Debian's libcairo2 at $(LIBCAIRO): sudo apt-get install libcairo2" >&2; exit 1; \
	  fi; }

pytest: venv chromium browser-assets wordnet libcairo
	DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(TEST_REDIS_URL) $(BIN)/pytest -n 2 --dist loadfile $(PYTEST_ARGS)

# `make bench` runs every benchmark and sums up its figures against the goals (docs/benchmarks.md);
# `make bench NAME=claim_cycle ARGS="--path html"` runs one.
bench: venv
	$(BIN)/python -m bench $(NAME) $(ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles $(BROWSER_ASSETS)/node_modules
