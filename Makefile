# The two commands of the README: `make demo` and `make test` (each sets everything up first).
PY := .venv/bin/python
export PYTHONPATH := $(CURDIR)
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: setup demo test typecheck bench

setup:
	@bash scripts/bootstrap.sh

demo: setup
	$(PY) examples/quickstart.py

test: setup
	$(PY) -m pytest -q -n 2 tests

bench: setup
	$(PY) benchmarks/overhead.py
