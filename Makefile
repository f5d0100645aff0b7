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
	$(PY) -m pip install -q -e '.[onnx,ann,server,documents]'

# Debian packages the tests use where this may install them: Chromium (the HTML report's
# browser tests), Tesseract with Korean and English (OCR of scanned pages), a Korean font
# (PDFs and images the reader tests write)
DEBIAN_TEST_PACKAGES = chromium tesseract-ocr tesseract-ocr-kor tesseract-ocr-eng fonts-nanum

install-dev: $(PY)
	$(PY) -m pip install -q -e '.[dev]'
	@missing=""; for p in $(DEBIAN_TEST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null 2>&1; } || \
	  echo "note: could not install$$missing; the tests that need them will skip (install those Debian packages)"; fi

demo: install
	$(PY) -m chaja.demo --data $(DATA) --store $(STORE)

test: install-dev
	$(PY) -m pytest -q

clean:
	rm -rf runs .pytest_cache
