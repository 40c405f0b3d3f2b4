# Denoise Dashboard: `make run` serves the product, `make test` runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := run

# The newest python3.1x >= 3.12 on the PATH (pyenv shims included).
PYTHON ?= $(shell for v in 3.15 3.14 3.13 3.12; do command -v python$$v >/dev/null 2>&1 && python$$v -c 'import sys; sys.exit(sys.version_info < (3,12))' 2>/dev/null && { echo python$$v; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/denoise
PYTEST_ARGS ?=

.PHONY: run test lint test-postgres test-sqlite services chromium install bench clean check-python

check-python:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "error: Python 3.12 or newer is required (Django 6). Install python3.12 or python3.13 and retry." >&2; exit 1; \
	fi

$(VENV)/.installed: pyproject.toml sdk/pyproject.toml | check-python
	@echo "Installing into $(VENV) with $(PYTHON) ($$($(PYTHON) --version))"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
	@$(PY) -m pip install -q -e ./sdk -e '.[test]' 2>&1 | grep -v '^WARNING: Location' || true
	@$(PY) -c 'import django, rest_framework, channels, celery, psycopg, playwright, denoiseflow, brotli'
	@touch $@

install: $(VENV)/.installed

run: install
	@$(PY) manage.py migrate --noinput -v0
	@$(PY) manage.py collectstatic --noinput -v0
	@SITE_ROOT=http://$(HOST):$(PORT) $(PY) manage.py load_demo
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl-C to stop)"
	@SITE_ROOT=http://$(HOST):$(PORT) $(PY) manage.py serve $(HOST):$(PORT)

# PostgreSQL and Redis are started when down; Chromium is installed when missing.
services:
	@pg_isready -q -h 127.0.0.1 -p 5432 || { pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start; for i in $$(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done; }
	@redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
	@for i in $$(seq 20); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done

chromium:
	@test -x /usr/bin/chromium || { (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@test -x /usr/bin/chromium || { echo "error: /usr/bin/chromium is missing and could not be installed" >&2; exit 1; }

# The linter and the SQLite smoke test run first so that the full suite's summary closes the output.
# Static files are not collected here: tests/denoise_dashboard/test_static_files.py collects into a
# folder of its own, and in-process servers (live_server) serve from the finders, by plain names.
test: install services chromium
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory test-sqlite
	@$(MAKE) --no-print-directory test-postgres

# Ruff: pyflakes, pycodestyle's error classes, import order, bugbear (pyproject.toml).
lint: install
	$(VENV)/bin/ruff check .

test-postgres:
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m pytest -m "not sqlite_smoke" -p no:cacheprovider --durations=30 $(PYTEST_ARGS)

# The embedded default keeps a smoke test: no DATABASE_URL, no REDIS_URL.
test-sqlite:
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest -m sqlite_smoke -p no:cacheprovider -q

bench: install services
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/ingest.py

clean:
	rm -rf $(VENV) var staticfiles
