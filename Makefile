# The two commands: `make run` (the product with demo data) and `make test` (the whole suite).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install lint migrate demo bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

run: demo
	@echo ""
	@echo "  OnCore is at http://$(HOST):$(PORT)/  (admin login: demo-admin / demo-admin-pass, member: demo-member / demo-member-pass)"
	@echo ""
	@trap 'kill 0' INT TERM EXIT; \
	$(PY) manage.py qcluster & \
	DEBUG=$${DEBUG:-1} $(PY) manage.py runserver $(HOST):$(PORT)

test: install
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) var
