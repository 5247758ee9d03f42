# The two commands: `make run` (the product with demo data) and `make test` (the whole suite).
# `make test-fast` leaves out the browser and slow tests; `make check` is what CI checks besides the tests.

# The first of python3.13, 3.12, 3.11, python3 that is Python 3.11 or newer (override: make PYTHON=...).
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Local commands run with DEBUG=1 unless told otherwise: with DEBUG off the app refuses to start without a SECRET_KEY.
LOCAL_ENV := DEBUG=$${DEBUG:-1}
# A production-like environment for `manage.py check --deploy` (docs/deploy.md lists the real one).
DEPLOY_ENV := DEBUG=0 SECRET_KEY=check-deploy-$$(date +%s)-a-long-random-value-that-is-only-for-this-check \
	ALLOWED_HOSTS=oncore.example.com SECURE_SSL_REDIRECT=1 SECURE_PROXY_SSL_HEADER=1 \
	SECURE_HSTS_SECONDS=31536000 SECURE_HSTS_INCLUDE_SUBDOMAINS=1 SECURE_HSTS_PRELOAD=1

# axe-core for the browser tests' accessibility checks, from its npm package, pinned by package-lock.json.
AXE_DIR := tests/browser/axe
AXE := $(AXE_DIR)/node_modules/axe-core/axe.min.js

.PHONY: run test test-fast check install lint format migrate demo clean axe

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || { \
		test -n "$(PYTHON)" || { echo "OnCore needs Python 3.11 or newer (3.11, 3.12 and 3.13 are tested): none of python3.13, python3.12, python3.11, python3 on the PATH is one. Install one, or name it: make PYTHON=/path/to/python3.12"; exit 1; }; \
		$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "$(PYTHON) is older than Python 3.11, which OnCore needs."; exit 1; }; \
		$(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

$(AXE): $(AXE_DIR)/package.json $(AXE_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd $(AXE_DIR) && npm ci --no-audit --no-fund --silent && touch node_modules/axe-core/axe.min.js; \
	else echo "npm not found: the browser tests need axe-core (apt-get install npm); outside CI they are skipped"; \
	test "$$CI" != true; fi

axe: $(AXE)

migrate: install
	$(LOCAL_ENV) $(PY) manage.py migrate --noinput

demo: migrate
	$(LOCAL_ENV) $(PY) manage.py load_demo

run: demo
	@echo ""
	@echo "  OnCore is at http://$(HOST):$(PORT)/  (admin login: demo-admin / demo-admin-pass, member: demo-member / demo-member-pass)"
	@echo ""
	@trap 'kill 0' INT TERM EXIT; \
	$(LOCAL_ENV) nice -n 10 $(PY) manage.py qcluster & \
	$(LOCAL_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

test: install axe
	$(PY) -m pytest

test-fast: install
	$(PY) -m pytest -m "not browser and not slow" -q

check: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(LOCAL_ENV) $(PY) manage.py makemigrations --check --dry-run
	$(DEPLOY_ENV) $(PY) manage.py check --deploy --fail-level WARNING

lint: install
	$(VENV)/bin/ruff check .

format: install
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) var $(AXE_DIR)/node_modules
