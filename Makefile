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

demo: install
	$(PY) -m chaja.demo --data $(DATA) --store $(STORE)

test: install-dev
	$(PY) -m pytest -q

clean:
	rm -rf runs .pytest_cache
