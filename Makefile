# Quick start: `make serve` (set up, build, serve on http://127.0.0.1:8000), `make test`.
VENV := .venv
BIN := $(VENV)/bin
# Root installs directly; anyone else needs sudo for Debian packages.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Python keeps compiled modules unless told not to: a test run starts a hundred interpreters
# (workers, the CLI, MkDocs, parity) that would each compile the package anew.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup serve build check test test-fast lint chromium fonts clean

setup: $(VENV)/.installed node_modules/.installed fonts

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --editable '.[test,bench]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

serve: setup
	$(BIN)/errorkb serve

build: setup
	$(BIN)/errorkb build

check: setup
	$(BIN)/errorkb check

# Browser tests drive Debian's Chromium; Playwright never downloads a browser here.
chromium:
	@command -v chromium >/dev/null || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

# The og:image cards are drawn in DejaVu (generator/site/cards.py); without Debian's
# package they fall back to Pillow's bundled font.
fonts:
	@[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf ] || ! command -v apt-get >/dev/null || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq fonts-dejavu-core; }

lint: setup
	$(BIN)/ruff check .
	@# mypy cannot follow the editable install's import hook: it reads generator/ as errorkb
	@# through a link in a scratch folder.
	mkdir -p .mypy-src && ln -sfn ../generator .mypy-src/errorkb
	MYPYPATH=.mypy-src $(BIN)/mypy -p errorkb

# On both cores, a test file to a worker (its module fixtures are made once); the real
# content is built once, by the first worker that needs it (tests/conftest.py). Node's test
# runner (tests/js/: match.js against generator/search/engine.py) runs as one of the tests.
test: setup chromium lint
	$(BIN)/pytest -n 2 --dist loadfile

# The edit-test loop: everything but the whole-site scans, the browser, the kill runs, the
# wheel, the whole grid of SGLang's calculator and match.js against engine.py on the real
# content (on the fixtures, it runs).
test-fast: setup lint
	$(BIN)/pytest -m "not slow" -n 2

clean:
	rm -rf site .site-* .errorkb-cache .mypy-src
