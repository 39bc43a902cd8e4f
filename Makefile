# The two commands of the README: `make demo` and `make test` (each sets everything up first).
# For work on symscalar: `make test-fast` (the inner loop), `make lint`, `make format`,
# `make typecheck`, `make docs`, `make check-wheel`. CI (.ci/run) runs lint, typecheck, the
# whole test suite, docs and check-wheel.
PY := .venv/bin/python
export PYTHONPATH := $(CURDIR)
# Bytecode is cached (in __pycache__ folders, which git ignores), even where the environment
# says not to: without it every pytest process, each xdist worker included, compiles symscalar
# and the tests again and redoes pytest's assertion rewriting of its plugins (hypothesis, xdist,
# anyio): about 4 s of CPU per process.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test test-fast lint format typecheck bench docs check-wheel

setup:
	@bash scripts/bootstrap.sh

demo: setup
	$(PY) examples/quickstart.py

test: setup
	$(PY) -m pytest -q -n 2 tests

# The inner loop: about 830 of the suite's 3,760 tests, about 45 s of CPU (it was 150 s) over
# two xdist workers, so about 25 s on two idle cores. Left out (markers in pyproject.toml):
# the mypy/Pyright corpus, the OpInfo sweep, the tests marked slow (real HF/litgpt models,
# thunder's OpInfo samples, property sweeps, subprocesses, float64 gradgradcheck) and, of each
# parametrized test, the cases beyond a fixed sample of 4 (`unsampled`, tests/fast_tier.py).
# Modules whose tests are all left out are not imported: no worker imports transformers,
# litgpt, thunder or mypy.
test-fast: setup
	$(PY) -m pytest -q -n auto -m "not mypy and not opinfo and not slow and not unsampled" tests

# ruff's lint (with import order) and format checks, both reported; configuration in pyproject.toml.
lint: setup
	$(PY) -m ruff check .; status=$$?; $(PY) -m ruff format --check . && exit $$status

# What `make lint` checks, fixed where ruff can: safe fixes, import order, formatting.
format: setup
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

# mypy with the symscalar plugin over the type-check cases and the library (--strict), then
# the case expectations of both checkers (mypy with and without the plugin, basedpyright).
typecheck: setup
	$(PY) -m symscalar check --mypy-arg=--strict symscalar
	$(PY) -m pytest -q -p no:randomly tests/test_typecheck.py

bench: setup
	$(PY) benchmarks/overhead.py

# The docs site (mkdocs.yml: docs/*.md and the API reference from the docstrings) built into
# site/ with every warning an error (a broken link, a docstring that does not render).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

# The built wheel installed into a fresh virtual environment with only its declared
# dependencies, then the README tour, an example and `python -m symscalar check` run there.
check-wheel: setup
	bash scripts/check_wheel.sh
