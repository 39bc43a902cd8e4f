"""The examples the README shows run and check themselves (they assert their claims)."""

import runpy
from pathlib import Path

import pytest
import torch

import symscalar

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMSCALAR_EXAMPLE_STEPS", "30")  # train_gpt.py: a short run in CI
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_readme_tour_runs_and_says_the_truth(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    tour = readme.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(tour, "README.md tour", "exec"), namespace)  # noqa: S102
    assert namespace["f"].cache_info() == symscalar.CacheInfo(hits=2, misses=2, entries=2)
    printed = capsys.readouterr().out
    assert "# cotangents: t0; saved for backward: t1, s0" in printed
    with pytest.raises(symscalar.StaticValueRequiredError) as info:
        namespace["g"](torch.ones(2, 2), 1)
    assert str(info.value).startswith(
        'torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got '
        "dynamic value s0 (DynamicInt, parameter 'n' of g)"
    )
