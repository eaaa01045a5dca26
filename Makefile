# prereg: the commands a user runs. `make test` and `make demo` set themselves up on a fresh
# machine that has Python 3.11 (they create .venv and install the project when needed).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: setup generate check test lint demo bench bench-scale clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

generate: setup  ## compile the language and every spec into generated/
	$(BIN)/prereg compile --language

check: setup  ## fail when generated/ is not exactly what the specs compile to
	$(BIN)/prereg check

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The suite starts thousands of prereg processes: each reads the runtime's compiled bytecode
# rather than compiling every module again (a machine that sets PYTHONDONTWRITEBYTECODE never
# keeps it: ~1 CPU-s a process; an empty value turns the setting off).
test: setup  ## check (with the language schema and reference), lint, then the test suite
	$(BIN)/prereg check --language
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m compileall -q runtime generated > /dev/null
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadfile

demo: setup  ## run all three studies on bundled inputs; reports in out/demo/
	$(BIN)/prereg demo --out out/demo $(if $(FORCE),--force,)

bench: setup  ## performance figures (medians), not pass/fail
	$(BIN)/python bench/run.py

bench-scale: setup  ## the scale issue's figures beside their floors: 1M rows, then a 10M-row score (tens of minutes)
	$(BIN)/python bench/scale.py --rows 1000000 --ten-million

clean:
	rm -rf out .pytest_cache .ruff_cache
