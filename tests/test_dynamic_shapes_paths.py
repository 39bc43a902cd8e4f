"""Dynamic dims of nested inputs, addressed by pytree path (``symscalar/_jit/dim_paths.py``).

Each case runs the jitted function over several sizes against eager torch (values and
gradients) with one trace, and checks what a wrong declaration or call raises.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, NamedTuple

import pytest
import torch
import torch.utils._pytree as pytree
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import symscalar
from symscalar import Dim, ShapeContractError


class _Layer:
    """A KV-cache layer with keys and values (registered below with key paths)."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        self.keys = keys
        self.values = values


class _Cache:
    """A KV cache holding layers, registered as a pytree node with key paths, as HF caches
    are (``past_key_values.layers[0].keys``)."""

    def __init__(self, layers: list[_Layer]) -> None:
        self.layers = layers


def _register() -> None:
    pytree.register_pytree_node(
        _Layer,
        lambda layer: ([layer.keys, layer.values], None),
        lambda children, _: _Layer(*children),
        flatten_with_keys_fn=lambda layer: (
            [(pytree.GetAttrKey("keys"), layer.keys), (pytree.GetAttrKey("values"), layer.values)],
            None,
        ),
    )
    pytree.register_pytree_node(
        _Cache,
        lambda cache: ([cache.layers], None),
        lambda children, _: _Cache(children[0]),
        flatten_with_keys_fn=lambda cache: ([(pytree.GetAttrKey("layers"), cache.layers)], None),
    )


_register()


class _NoKeys:
    def __init__(self, t: torch.Tensor) -> None:
        self.t = t


pytree.register_pytree_node(_NoKeys, lambda n: ([n.t], None), lambda c, _: _NoKeys(c[0]))


class Attention(nn.Module):
    """One attention step over a KV cache: the new keys/values are appended (``torch.cat``)."""

    def __init__(self, d: int = 8) -> None:
        super().__init__()
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)

    def forward(self, x: torch.Tensor, past_key_values: Any) -> tuple[torch.Tensor, Any]:
        q = self.q(x).unsqueeze(1)  # (B, 1, T, d)
        k, v = self.kv(x).unsqueeze(1).chunk(2, dim=-1)
        new_layers = []
        out = torch.zeros_like(q)
        for layer in past_key_values.layers:
            keys = torch.cat([layer.keys, k], dim=2)
            values = torch.cat([layer.values, v], dim=2)
            att = torch.softmax(q @ keys.transpose(-1, -2) / 8**0.5, dim=-1)
            out = out + att @ values
            new_layers.append(_Layer(keys, values))
        return out.squeeze(1), _Cache(new_layers)


def _cache(batch: int, length: int, layers: int = 2, d: int = 8, grad: bool = False) -> _Cache:
    def t() -> torch.Tensor:
        return torch.randn(batch, 1, length, d, dtype=torch.float64, requires_grad=grad)

    return _Cache([_Layer(t(), t()) for _ in range(layers)])


def test_kv_cache_paths_one_program_over_cache_lengths() -> None:
    torch.manual_seed(0)
    model = Attention().double()
    jitted = symscalar.jit(
        model,
        dynamic_dims={
            "x": ("B", "T"),
            "past_key_values.layers.*.keys": ("B", None, "S", None),
            "past_key_values.layers.*.values": ("B", None, "S", None),
        },
    )
    for B, T, S in [(1, 1, 3), (2, 1, 7), (3, 4, 1), (2, 2, 16)]:
        x = torch.randn(B, T, 8, dtype=torch.float64, requires_grad=True)
        cache = _cache(B, S, grad=True)
        out, new = jitted(x, cache)
        ref_out, ref_new = model(x, cache)
        torch.testing.assert_close(out, ref_out)
        for got, want in zip(new.layers, ref_new.layers):
            torch.testing.assert_close(got.keys, want.keys)
            torch.testing.assert_close(got.values, want.values)
        grads = torch.autograd.grad(out.sum(), [x, cache.layers[0].keys, *model.parameters()])
        ref = torch.autograd.grad(ref_out.sum(), [x, cache.layers[0].keys, *model.parameters()])
        for g, r in zip(grads, ref):
            torch.testing.assert_close(g, r)
    assert jitted.cache_info().misses == 1
    assert "s_S" in str(jitted.last_trace())


def test_bracket_and_dotted_forms_address_dict_keys() -> None:
    def f(batch: Any) -> torch.Tensor:
        return batch["pixel_values"].sum((1, 2)) * batch["scale"].mean()

    for spelling in ("batch['pixel_values']", 'batch["pixel_values"]', "batch.pixel_values"):
        jitted = symscalar.jit(f, dynamic_dims={spelling: ("B",)})
        for B in (1, 2, 5):
            batch = {"pixel_values": torch.randn(B, 3, 4), "scale": torch.randn(2)}
            torch.testing.assert_close(jitted(batch), f(batch))
        assert jitted.cache_info().misses == 1, spelling


class Inputs(NamedTuple):
    ids: torch.Tensor
    mask: torch.Tensor


@dataclasses.dataclass
class ModelInputs:
    pixel_values: torch.Tensor
    labels: torch.Tensor


pytree.register_dataclass(ModelInputs)


def test_namedtuple_dataclass_and_index_paths() -> None:
    def f(inputs: Any, extra: Any) -> torch.Tensor:
        a = (inputs.ids * inputs.mask).sum(-1)
        b = extra.pixel_values.mean(-1) + extra.labels
        return a + b + extra_list_sum(extra)

    def extra_list_sum(extra: ModelInputs) -> torch.Tensor:
        return extra.labels * 2

    jitted = symscalar.jit(
        f,
        dynamic_dims={
            "inputs.ids": ("B", "T"),
            "inputs.mask": ("B", "T"),  # a NamedTuple field is an attribute (inputs[1] lists the paths)
            "extra.pixel_values": ("B", None),
            "extra.labels": ("B",),
        },
    )
    for B, T in [(1, 1), (2, 5), (4, 3)]:
        inputs = Inputs(torch.randn(B, T), torch.randn(B, T))
        extra = ModelInputs(torch.randn(B, 6), torch.randn(B))
        torch.testing.assert_close(jitted(inputs, extra), f(inputs, extra))
    assert jitted.cache_info().misses == 1


def test_empty_cache_under_star_is_allowed_and_a_new_structure_retraces() -> None:
    def f(x: torch.Tensor, cache: Any) -> torch.Tensor:
        return x + sum((t.sum() for t in cache), torch.zeros(()))

    jitted = symscalar.jit(f, dynamic_dims={"x": ("B",), "cache.*": ("S",)})
    torch.testing.assert_close(jitted(torch.ones(2), []), f(torch.ones(2), []))  # empty: nothing addressed
    for S in (1, 4, 9):
        cache = [torch.randn(S), torch.randn(S)]
        torch.testing.assert_close(jitted(torch.ones(3), cache), f(torch.ones(3), cache))
    assert jitted.cache_info().misses == 2  # [] and [t, t] are two structures, each one program


def test_a_path_that_matches_nothing_lists_the_paths() -> None:
    jitted = symscalar.jit(lambda batch: batch["x"] * 2, dynamic_dims={"batch['y']": ("B",)})
    with pytest.raises(ShapeContractError, match=r"matches no tensor.*batch\['x'\]"):
        jitted({"x": torch.ones(2)})


def test_ambiguous_paths_are_refused() -> None:
    jitted = symscalar.jit(lambda xs: xs[0] + xs[1], dynamic_dims={"xs.*": ("B",), "xs[0]": ("B",)})
    with pytest.raises(ShapeContractError, match=r"xs\[0\] is matched by several.*'xs\.\*', 'xs\[0\]'"):
        jitted([torch.ones(2), torch.ones(2)])


def test_a_path_ending_at_a_container_or_a_number_is_refused() -> None:
    jitted = symscalar.jit(lambda b: b["x"][0] * b["n"], dynamic_dims={"b.x": ("B",)})
    with pytest.raises(ShapeContractError, match="which is a container, not a tensor"):
        jitted({"x": [torch.ones(2)], "n": 2})
    jitted = symscalar.jit(lambda b: b["x"][0] * b["n"], dynamic_dims={"b.n": ("B",), "b.x.*": ("B",)})
    with pytest.raises(ShapeContractError, match="which is a int, not a tensor"):
        jitted({"x": [torch.ones(2)], "n": 2})


def test_node_without_key_paths_is_refused_with_the_fix() -> None:
    jitted = symscalar.jit(lambda n: n.t * 2, dynamic_dims={"n.t": ("B",)})
    with pytest.raises(ShapeContractError, match="flatten_with_keys_fn"):
        jitted(_NoKeys(torch.ones(3)))


def test_equal_names_and_ranges_across_nested_and_top_level() -> None:
    jitted = symscalar.jit(
        lambda x, b: x + b["y"], dynamic_dims={"x": (Dim("B", max=4),), "b['y']": (Dim("B", max=4),)}
    )
    torch.testing.assert_close(jitted(torch.ones(3), {"y": torch.ones(3)}), torch.full((3,), 2.0))
    unequal = r"dim B must be one size.*parameter 'x' dim 0 is 2.*b\['y'\] dim 0 is 3"
    with pytest.raises(ShapeContractError, match=unequal):
        jitted(torch.ones(2), {"y": torch.ones(3)})
    with pytest.raises(ShapeContractError, match=r"b\['y'\] dim 0 \(B\) is 5, outside its declared range \[1, 4\]"):
        jitted(torch.ones(4), {"y": torch.ones(5)})
    with pytest.raises(ShapeContractError, match=r"b\['y'\] has shape \(\) \(0 dims\)"):
        jitted(torch.ones(1), {"y": torch.tensor(1.0)})


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ({"batch..x": ("B",)}, "neither a parameter name nor a path"),
        ({"nope.x": ("B",)}, "'nope' is not a parameter"),
        ({"batch": ("B",), "batch.x": ("B",)}, "declared both as a tensor and by paths"),
    ],
)
def test_malformed_declarations(declaration: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        symscalar.jit(lambda batch: batch, dynamic_dims=declaration)


def test_an_annotated_parameter_cannot_hold_paths() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return x

    with pytest.raises(ValueError, match="must be unannotated"):
        symscalar.jit(f, dynamic_dims={"x.a": ("B",)})


def test_none_for_an_argument_with_paths_is_a_program_of_its_own() -> None:
    def f(x: torch.Tensor, cache: Any = None) -> torch.Tensor:
        return x if cache is None else x + cache["k"].sum(0)

    jitted = symscalar.jit(f, dynamic_dims={"cache['k']": ("S", None)})
    x = torch.randn(4)
    torch.testing.assert_close(jitted(x), x)
    for S in (1, 2, 7):
        cache = {"k": torch.randn(S, 4)}
        torch.testing.assert_close(jitted(x, cache), f(x, cache))
    assert jitted.cache_info().misses == 2


def test_an_optional_tensor_can_be_declared() -> None:
    """A declared parameter whose default is None may be None (transformers' ``generate`` drops
    an all-ones ``attention_mask``): None is a program of its own, every size of the tensor one."""

    def f(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return x if mask is None else x * mask

    jitted = symscalar.jit(f, dynamic_dims={"x": ("B",), "mask": ("B",)})
    for B in (1, 3, 8):
        x, mask = torch.randn(B), torch.randn(B)
        torch.testing.assert_close(jitted(x), x)
        torch.testing.assert_close(jitted(x, mask), f(x, mask))
    assert jitted.cache_info().misses == 2
    with pytest.raises(ShapeContractError, match=r"dim B must be one size.*'x' dim 0 is 2.*mask dim 0 is 3"):
        jitted(torch.ones(2), torch.ones(3))
    with pytest.raises(ShapeContractError, match=r"mask has shape \(\) \(0 dims\)"):
        jitted(torch.ones(2), torch.tensor(1.0))


def test_a_declared_parameter_without_a_none_default_must_be_a_tensor() -> None:
    jitted = symscalar.jit(lambda x, mask: x if mask is None else x * mask, dynamic_dims={"mask": ("B",)})
    with pytest.raises(ShapeContractError, match=r"must be a tensor, but got NoneType.*default None"):
        jitted(torch.ones(2), None)


def test_a_path_may_end_at_none() -> None:
    """An optional tensor inside an argument (a cache layer before its first update holds None)."""

    def f(x: torch.Tensor, cache: Any) -> torch.Tensor:
        return x + sum((t.sum() for t in cache if t is not None), torch.zeros(()))

    jitted = symscalar.jit(f, dynamic_dims={"cache.*": ("S",)})
    for S in (1, 4, 9):
        for cache in ([None, torch.randn(S)], [torch.randn(S), torch.randn(S)]):
            torch.testing.assert_close(jitted(torch.ones(2), cache), f(torch.ones(2), cache))
    assert jitted.cache_info().misses == 2


# A random nest of lists and dicts whose tensors all start with a dim B: one `*` path per
# leaf position declares it, and the jitted sum equals eager at every B with one trace.
_nests = st.recursive(
    st.just("leaf"),
    lambda inner: st.lists(inner, min_size=1, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, min_size=1),
    max_leaves=6,
)


def _build(shape: Any, batch: int) -> Any:
    if shape == "leaf":
        return torch.randn(batch, 2)
    if isinstance(shape, list):
        return [_build(s, batch) for s in shape]
    return {k: _build(v, batch) for k, v in shape.items()}


def _patterns(shape: Any, at: str) -> set[str]:
    if shape == "leaf":
        return {at}
    children = shape if isinstance(shape, list) else list(shape.values())
    keys = [f"[{i}]" for i in range(len(shape))] if isinstance(shape, list) else [f"[{k!r}]" for k in shape]
    return {p for k, c in zip(keys, children) for p in _patterns(c, at + k)}


@settings(max_examples=15, deadline=None)
@given(_nests.filter(lambda s: s != "leaf"))
def test_random_nests(shape: Any) -> None:
    def f(tree: Any) -> torch.Tensor:
        return sum((leaf.cumsum(0).sum(1) for leaf in pytree.tree_leaves(tree)), torch.zeros(()))

    jitted = symscalar.jit(f, dynamic_dims=dict.fromkeys(_patterns(shape, "tree"), ("B",)))
    for B in (1, 3, 2):
        value = _build(shape, B)
        torch.testing.assert_close(jitted(value), f(value))
    assert jitted.cache_info().misses == 1


def test_every_input_optional_as_an_hf_forward() -> None:
    """All declared parameters default to None (an HF model's forward): the generated key
    (``_jit/optional_dims.py``) checks equal names across whichever tensors are given."""

    def f(input_ids: Any = None, attention_mask: Any = None, scale: Any = None) -> torch.Tensor:
        out = input_ids if input_ids is not None else attention_mask * 2
        return out if attention_mask is None else out * attention_mask

    declared = {"input_ids": ("B", "T"), "attention_mask": ("B", "T")}
    jitted = symscalar.jit(f, dynamic_dims=declared)
    assert jitted._symscalar_state.contract.flat_key is not None
    for B, T in [(1, 2), (3, 5), (2, 1)]:
        ids, mask = torch.randn(B, T), torch.randn(B, T)
        for args in [(ids,), (ids, mask), (None, mask)]:
            torch.testing.assert_close(jitted(*args), f(*args))
    assert jitted.cache_info().misses == 3
    with pytest.raises(ShapeContractError, match=r"dim T must be one size"):
        jitted(torch.ones(2, 3), torch.ones(2, 4))
    with pytest.raises(ShapeContractError, match=r"has shape \(2,\) \(1 dims\)"):
        jitted(None, torch.ones(2))


_optional_values = st.one_of(
    st.none(),
    st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from([(), (2,)])),
    st.just("int"),
    st.just("double"),
)


def _value(spec: Any) -> Any:
    if spec is None or spec == "int":
        return None if spec is None else 3
    if spec == "double":
        return torch.ones(2, 2, dtype=torch.float64)
    b, t, rest = spec
    return torch.zeros(b, t, *rest)


@settings(max_examples=60, deadline=None)
@given(
    x=st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from([(), (3,)])),
    mask=_optional_values,
    other=_optional_values,
)
def test_the_generated_optional_key_is_the_walks(x: Any, mask: Any, other: Any) -> None:
    """The generated cache-hit key of optional declared tensors gives the path walk's key and
    program inputs, or defers to the walk, which raises its error."""

    def f(x: Any, mask: Any = None, other: Any = None) -> Any:
        return x

    declared = {"x": ("B", symscalar.Dim("T", max=3)), "mask": ("B", "T"), "other": (None, "S", 2)}
    contract = symscalar.jit(f, dynamic_dims=declared)._symscalar_state.contract
    tops, values = (_value(x),), (_value(mask), _value(other))
    try:
        top, nested = contract.nested_key(tops, values)
    except ShapeContractError as e:
        with pytest.raises(ShapeContractError, match=re.escape(str(e))):
            contract.flat_key(*tops, *values)
        return
    flat = contract.flat_key(*tops, *values)
    assert flat[0] == top
    got = [(k, [id(t) for t in a]) for k, a in zip(flat[1::2], flat[2::2], strict=True)]
    assert got == [(k, [id(t) for t in a]) for k, a in nested]
