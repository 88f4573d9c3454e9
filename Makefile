# The two commands a new user types: `make serve` and `make test`. Every other target is a step they
# run first; each is idempotent and re-runs only when its inputs change.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM

.PHONY: serve test test-fast test-lesson build check bench chromium setup clean

serve: $(VENV)/.base node_modules/.installed
	$(PY) build.py serve

# pytest-xdist: the browser tests run in order on one worker, sharing one Python (tests/browser/conftest.py);
# the other workers run the rest meanwhile.
test: $(VENV)/.test node_modules/.installed chromium
	$(PY) -m ruff check .
	$(PY) -m pytest -n auto --dist loadgroup --durations=15

# The inner loop: everything but the browser tests (under a minute), and the browser tests of one lesson
# (make test-lesson LESSON=kv-cache-serving).
test-fast: $(VENV)/.test node_modules/.installed
	$(PY) -m ruff check .
	$(PY) -m pytest -m "not browser" -q -n auto

test-lesson: $(VENV)/.test node_modules/.installed chromium
	@test -n "$(LESSON)" || { echo "name the lesson: make test-lesson LESSON=<slug from lessons/course.yml>"; exit 2; }
	$(PY) -m pytest tests/browser --lesson $(LESSON)

build: $(VENV)/.base node_modules/.installed
	$(PY) build.py build

check: $(VENV)/.base node_modules/.installed
	$(PY) build.py check

bench: $(VENV)/.test node_modules/.installed chromium
	$(PY) bench/run.py

setup: $(VENV)/.test node_modules/.installed chromium

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	touch $@

$(VENV)/.base: $(VENV)/.created pyproject.toml
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.test: $(VENV)/.base pyproject.toml
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's Chromium: Playwright cannot download its own browser on these machines.
chromium:
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's chromium (browser tests drive it)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else \
		echo "Browser tests need Chromium at $(CHROMIUM). Install it (sudo apt-get install chromium)"; \
		echo "or point CHROMIUM at a Chromium binary, then run make test again."; \
		exit 1; \
	fi

clean:
	rm -rf _site .venv node_modules .pytest_cache
