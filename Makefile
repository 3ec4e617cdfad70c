# crowdlex: `make run` serves the platform with demo data; `make test` runs every check.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The test suite runs against PostgreSQL (SQLite ignores row locks); override to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
PYTEST_ARGS ?=

.PHONY: run test lint typecheck pytest bench venv clean

$(BIN)/.installed: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

venv: $(BIN)/.installed

# The embedded default is a development server: DEBUG is off unless set (crowdlex/settings.py).
run: export DEBUG ?= 1
run: venv
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver 127.0.0.1:8000

test: lint typecheck pytest

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv
	$(BIN)/mypy .

pytest: venv
	DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(TEST_REDIS_URL) $(BIN)/pytest -n 2 --dist loadfile $(PYTEST_ARGS)

# `make bench` lists the benchmarks; `make bench NAME=claim_cycle ARGS="--seconds 20"` runs one.
bench: venv
	$(BIN)/python -m bench $(NAME) $(ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
