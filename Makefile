# The two commands a new user types: `make serve` and `make test`. Every other target is a step they
# run first; each is idempotent and re-runs only when its inputs change.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CHROMIUM ?= /usr/bin/chromium
CHROMIUM_SHELL ?= /usr/bin/chromium-headless-shell
export CHROMIUM CHROMIUM_SHELL
# tests/engines: Firefox and WebKit. SKIP_ENGINES=firefox,webkit (either or both) skips their tests, said in the
# summary, and installs neither.
SKIP_ENGINES ?=
export SKIP_ENGINES

.PHONY: serve test test-sim test-fast test-lesson build check bench chromium engines setup clean

serve: $(VENV)/.base node_modules/.installed
	$(PY) build.py serve

# pytest-xdist: each worker takes the next test as it finishes one, the longest work first and tests/engines as one
# unit on one worker (tests/conftest.py); a worker's browser tests share one Chromium and one Python
# (tests/browser/conftest.py), and the engines' one Firefox and one WebKit (tests/engines/conftest.py).
test: $(VENV)/.test node_modules/.installed chromium engines
	$(PY) -m ruff check .
	$(PY) -m pytest -n auto --dist loadgroup --durations=15

# The inner loops: the simulator's tests (under a minute on 2 cores); everything but the browser tests (about
# 3.5 minutes: ruff and pytest both run, and a long line does not hide a failing test); the browser tests of one
# lesson (make test-lesson LESSON=kv-cache-serving).
test-sim: $(VENV)/.test
	$(PY) -m pytest tests/sim -q -n auto

test-fast: $(VENV)/.test node_modules/.installed
	@$(PY) -m ruff check .; lint=$$?; \
	$(PY) -m pytest -m "not browser and not engines" -q -n auto; tests=$$?; \
	exit $$(( lint || tests ))

test-lesson: $(VENV)/.test node_modules/.installed chromium
	@test -n "$(LESSON)" || { echo "name the lesson: make test-lesson LESSON=<slug from lessons/course.yml>"; exit 2; }
	$(PY) -m pytest tests/browser --lesson $(LESSON)

build: $(VENV)/.base node_modules/.installed
	$(PY) build.py build

check: $(VENV)/.base node_modules/.installed
	$(PY) build.py check

bench: $(VENV)/.test node_modules/.installed chromium
	$(PY) bench/run.py

setup: $(VENV)/.test node_modules/.installed chromium engines

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

# Debian's Chromium (bench/ drives it) and its headless shell (the browser tests drive it): Playwright cannot download
# its own browser on these machines.
chromium:
	@missing=""; \
	[ -x "$(CHROMIUM)" ] || missing="$$missing chromium"; \
	[ -x "$(CHROMIUM_SHELL)" ] || missing="$$missing chromium-headless-shell"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's$$missing (the browser tests and bench/ drive them)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else \
		echo "Browser tests need$$missing. Install it (sudo apt-get install$$missing)"; \
		echo "or point CHROMIUM and CHROMIUM_SHELL at Chromium's binaries, then run make test again."; \
		exit 1; \
	fi

# Debian's Firefox ESR, and WebKitGTK's WebDriver with a virtual display to draw on (tests/engines/drivers.py).
engines:
	@missing=""; \
	case ",$(SKIP_ENGINES)," in *,firefox,*) ;; *) [ -x /usr/bin/firefox-esr ] || missing="$$missing firefox-esr";; esac; \
	case ",$(SKIP_ENGINES)," in *,webkit,*) ;; *) [ -x /usr/bin/WebKitWebDriver ] || missing="$$missing webkit2gtk-driver"; \
		[ -x /usr/bin/Xvfb ] || missing="$$missing xvfb";; esac; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's$$missing (tests/engines drive Firefox and WebKit)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else \
		echo "Firefox's and WebKit's tests need$$missing. Install it (sudo apt-get install$$missing),"; \
		echo "or skip those engines: make test SKIP_ENGINES=firefox,webkit"; \
		exit 1; \
	fi

clean:
	rm -rf _site .venv node_modules .pytest_cache
