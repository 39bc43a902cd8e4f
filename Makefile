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

# mypy with the symscalar plugin over the type-check cases and the library (--strict), then
# the case expectations of both checkers (mypy with and without the plugin, basedpyright).
typecheck: setup
	$(PY) -m symscalar check --mypy-arg=--strict symscalar
	$(PY) -m pytest -q -p no:randomly tests/test_typecheck.py

bench: setup
	$(PY) benchmarks/overhead.py
