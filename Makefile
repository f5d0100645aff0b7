# chaja: the two commands a newcomer needs.
#   make demo   install, index the bilingual React docs store, search it and score it
#   make test   install the test extras and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATA ?= ../shared/data
STORE ?= runs/react-docs.chaja

.PHONY: install install-dev demo test clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	$(PY) -m pip install -q -e '.[onnx,ann,server]'

install-dev: $(PY)
	$(PY) -m pip install -q -e '.[dev]'
	@# the HTML report's tests open it in a headless Chromium: Debian's package where this may install it
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } || \
	  echo "note: no chromium; the HTML report's browser tests will skip (install Debian's chromium package)"

demo: install
	$(PY) -m chaja.demo --data $(DATA) --store $(STORE)

test: install-dev
	$(PY) -m pytest -q

clean:
	rm -rf runs .pytest_cache
