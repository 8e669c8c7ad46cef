"""PyMC models end to end: log-density, gradient and Deterministics through ptonnx, against PyTensor.

Run in an environment with PyMC (`pip install ptonnx[pymc,test]`); skipped without it.
Each model of `models.MODELS` is compared at its initial point and at random points of
the unconstrained space, float64, rtol 1e-10, at every onnxruntime level:

- the plain graph: `model.logp()` and `pytensor.grad` of it, compiled by `ptonnx.compile_function`
  and by `ptonnx.pymc.compile_logp(rewrite=False)`, against PyTensor's evaluation of that graph;
- the file `ptonnx.pymc.export_logp` writes (read back, checked, run by onnxruntime by input
  name) against PyMC's `model.compile_logp()` and `compile_dlogp()`;
- PyMC's own `compile_logp` and `compile_dlogp` with `mode="ONNX"`;
- the Deterministics and constrained free variables (`export_deterministics`, `rewrite=False`,
  and `model.compile_fn(..., mode="ONNX")`).

Then `pm.Data` with `set_data`, invalid parameters (-inf as in PyMC's compiled functions),
and the API's edges.

PyMC's compiled functions are the reference with PyTensor's Python implementations
(`PYMC_MODE`): the same graph PyMC compiles, without C compilation, which on a fresh
machine takes minutes for these gradients.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode

import ptonnx
from ptonnx.errors import CheckFailedError, SignatureError
from tests.conftest import (
    ORT_LEVELS,
    REFERENCE_MODE,
    assert_no_miscompiled_pattern,
    check_like_pytensor,
    session_options,
)

pm = pytest.importorskip("pymc")

# these import PyMC: after the skip above
from pymc.logprob.utils import ParameterValueError  # noqa: E402

import ptonnx.pymc  # noqa: E402
from tests.pymc import models  # noqa: E402

RTOL = 1e-10
ATOL = 1e-12
#: PyMC's compiled functions (its rewrites, its parameter checks to -inf), run by PyTensor's Python implementations.
PYMC_MODE = Mode(linker="py", optimizer="fast_run")

pytestmark = pytest.mark.filterwarnings("ignore")


def close(actual, expected, context: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{context}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{context}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=context)


def at_levels(cm):
    """`cm` with onnxruntime's optimisations off, then at their default."""
    assert_no_miscompiled_pattern(cm.model)
    return [(level, cm.with_session_options(session_options(level))) for level in ORT_LEVELS]


def points(model, n: int = 2, seed: int = 0) -> list[dict]:
    """The initial point, then `n` points near it in the unconstrained space."""
    start = model.initial_point()
    rng = np.random.default_rng(seed)
    drawn = [
        {k: np.asarray(v + rng.normal(scale=0.5, size=v.shape)) if v.dtype.kind == "f" else v for k, v in start.items()}
        for _ in range(n)
    ]
    return [start, *drawn]


@functools.cache
def built(name: str):
    """A model no test changes, its points, and PyMC's compiled logp and dlogp at each (computed once per module)."""
    model = models.MODELS[name]()
    pts = points(model)
    logp_fn, dlogp_fn = model.compile_logp(mode=PYMC_MODE), model.compile_dlogp(mode=PYMC_MODE)
    return model, pts, [(logp_fn(p), dlogp_fn(p)) for p in pts]


def flat_grads(outputs) -> np.ndarray:
    """ptonnx's dlogp_<name> outputs as PyMC's compile_dlogp returns them: raveled and joined."""
    return np.concatenate([np.ravel(g) for g in outputs]) if outputs else np.zeros(0, "float32")


MODEL_NAMES = list(models.MODELS)


def test_at_least_ten_models():
    assert len(MODEL_NAMES) >= 10


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_plain_graph(name):
    """model.logp() and pytensor.grad, as built, against PyTensor's evaluation of them."""
    model, pts, _ = built(name)
    inputs = model.value_vars
    logp = model.logp()
    outputs = [logp, *pytensor.grad(logp, model.continuous_value_vars)]
    reference = pytensor.function(inputs, outputs, mode=REFERENCE_MODE)
    compiled = {
        "compile_function": ptonnx.compile_function(inputs, outputs),
        "pymc.compile_logp(rewrite=False)": ptonnx.pymc.compile_logp(model, rewrite=False),
    }
    for how, cm in compiled.items():
        onnx.checker.check_model(cm.model, full_check=True)
        for level, run in at_levels(cm):
            for k, point in enumerate(pts):
                args = [point[v.name] for v in inputs]
                for i, (a, e) in enumerate(zip(run(*args), reference(*args), strict=True)):
                    close(a, e, f"{name} {how} output {i} at point {k}, {level}")


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_export_logp(name, tmp_path):
    """export_logp against PyMC's compile_logp and compile_dlogp: the file, checked by onnx, run by
    onnxruntime with inputs fed by name, is the CompiledModel returned."""
    model, pts, expected = built(name)
    path = tmp_path / f"{name}.onnx"
    cm = ptonnx.pymc.export_logp(model, path)
    assert cm.input_names == [v.name for v in model.value_vars]
    assert cm.output_names == ["logp"] + [f"dlogp_{v.name}" for v in model.continuous_value_vars]
    loaded = onnx.load(path)
    assert loaded.SerializeToString() == cm.model.SerializeToString()
    onnx.checker.check_model(loaded, full_check=True)
    assert_no_miscompiled_pattern(loaded)
    for level in ORT_LEVELS:
        session = ort.InferenceSession(str(path), session_options(level), providers=["CPUExecutionProvider"])
        for k, (point, (logp_expected, dlogp_expected)) in enumerate(zip(pts, expected, strict=True)):
            logp, *grads = session.run(None, {v.name: point[v.name] for v in model.value_vars})
            close(logp, logp_expected, f"{name} logp at point {k}, {level}")
            close(flat_grads(grads), dlogp_expected, f"{name} dlogp at point {k}, {level}")
            for g, v in zip(grads, model.continuous_value_vars, strict=True):
                assert g.shape == point[v.name].shape, v.name


def _mode_inputs(fn, point) -> list:
    """What a PointFunc compiled with mode="ONNX" gives its model: explicit inputs, then shared values."""
    specs = fn.f.maker.inputs
    return [point[s.variable.name] if not s.implicit else s.variable.get_value() for s in specs]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_onnx_mode(name):
    """PyMC's own compile_logp and compile_dlogp with mode="ONNX", through ptonnx and onnxruntime."""
    model, pts, expected = built(name)
    for i, (what, fn) in enumerate((("logp", model.compile_logp(mode="ONNX")), ("dlogp", model.compile_dlogp(mode="ONNX")))):
        cm = fn.f.maker.linker.compiled
        onnx.checker.check_model(cm.model, full_check=True)
        for k, point in enumerate(pts):
            close(fn(point), expected[k][i], f"{name} {what} (mode ONNX) at point {k}")
            for level, run in at_levels(cm):
                (out,) = run(*_mode_inputs(fn, point))
                close(out, expected[k][i], f"{name} {what} (mode ONNX) at point {k}, {level}")


def _exported(model) -> list:
    """What compile_deterministics(constrained=True) outputs: transformed free variables, then Deterministics."""
    return [rv for rv in model.free_RVs if model.rvs_to_transforms[rv] is not None] + list(model.deterministics)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_deterministics(name, tmp_path):
    """The Deterministics and the constrained free variables from the value variables: exported (the graph
    PyMC compiles), compiled as built (rewrite=False), and PyMC's compile_fn with mode="ONNX"."""
    model, pts, _ = built(name)
    named = _exported(model)
    path = tmp_path / f"{name}_deterministics.onnx"
    if not named:
        with pytest.raises(SignatureError, match="no Deterministic"):
            ptonnx.pymc.export_deterministics(model, path, constrained=True)
        return
    outs = model.replace_rvs_by_values(named)
    compile_fn = functools.partial(model.compile_fn, outs, inputs=model.value_vars, point_fn=False, on_unused_input="ignore")
    reference, through_mode = compile_fn(mode=PYMC_MODE), compile_fn(mode="ONNX")
    plain = pytensor.function(model.value_vars, outs, mode=REFERENCE_MODE, on_unused_input="ignore")
    exported = ptonnx.pymc.export_deterministics(model, path, constrained=True)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    as_built = ptonnx.pymc.compile_deterministics(model, constrained=True, rewrite=False)
    for cm in (exported, as_built):
        assert cm.input_names == [v.name for v in model.value_vars]
        assert cm.output_names == [v.name for v in named]
    for k, point in enumerate(pts):
        args = [point[v.name] for v in model.value_vars]
        expected, expected_plain = reference(*args), plain(*args)
        for a, e, v in zip(through_mode(*args), expected, named, strict=True):
            close(a, e, f"{name} {v.name} (mode ONNX) at point {k}")
        for level in ORT_LEVELS:
            session = ort.InferenceSession(str(path), session_options(level), providers=["CPUExecutionProvider"])
            actual = session.run(None, {v.name: point[v.name] for v in model.value_vars})
            for a, e, v in zip(actual, expected, named, strict=True):
                close(a, e, f"{name} exported {v.name} at point {k}, {level}")
        for level, run in at_levels(as_built):
            for a, e, v in zip(run(*args), expected_plain, named, strict=True):
                close(a, e, f"{name} {v.name} (rewrite=False) at point {k}, {level}")


# --- pm.Data and set_data ---------------------------------------------------------------------

def _new_data(name: str, rng) -> dict:
    """New data for the model's containers, of another length than it was built with."""
    if name == "linear_regression":
        x = rng.normal(size=30)
        return {"x": x, "y": 3.0 - x + rng.normal(size=30)}
    if name == "hierarchical":
        return {"group_idx": rng.integers(0, 8, size=100)}  # the observations keep their length
    raise KeyError(name)


@pytest.mark.parametrize("name", ["linear_regression", "hierarchical"])
def test_set_data(name):
    """data="inputs": one model, fed the new data after set_data; data="constants": frozen at export."""
    model = models.MODELS[name]()
    pts = points(model)
    as_inputs = ptonnx.pymc.compile_logp(model, data="inputs")
    data_names = [d.name for d in model.data_vars]
    assert as_inputs.input_names == [v.name for v in model.value_vars] + data_names
    frozen = ptonnx.pymc.compile_logp(model)
    before = [model.compile_logp(mode=PYMC_MODE)(p) for p in pts]
    through_mode = model.compile_logp(mode="ONNX")  # compiled before set_data: reads the new data, as PyMC's functions do
    det_inputs = ptonnx.pymc.compile_deterministics(model, data="inputs") if model.deterministics else None

    pm.set_data(_new_data(name, np.random.default_rng(1)), model=model)
    logp_fn, dlogp_fn = model.compile_logp(mode=PYMC_MODE), model.compile_dlogp(mode=PYMC_MODE)
    det_fn = model.compile_fn(
        model.replace_rvs_by_values(model.deterministics), inputs=model.value_vars, mode=PYMC_MODE, point_fn=False, on_unused_input="ignore"
    )
    after = ptonnx.pymc.compile_logp(model)
    assert not np.allclose([logp_fn(p) for p in pts], before), "the new data must change the log-density"
    for k, point in enumerate(pts):
        close(through_mode(point), logp_fn(point), f"{name} mode ONNX after set_data, point {k}")
        for level, run in at_levels(frozen):
            close(run(*ptonnx.pymc.inputs_for(frozen, model, point))[0], before[k], f"{name} frozen data, point {k}, {level}")
        for how, cm in (("data inputs", as_inputs), ("exported after", after)):
            for level, run in at_levels(cm):
                logp, *grads = run(*ptonnx.pymc.inputs_for(cm, model, point))
                close(logp, logp_fn(point), f"{name} {how} logp after set_data, point {k}, {level}")
                close(flat_grads(grads), dlogp_fn(point), f"{name} {how} dlogp after set_data, point {k}, {level}")
        if det_inputs is not None:
            args = [point[v.name] for v in model.value_vars]
            for level, run in at_levels(det_inputs):
                for a, e in zip(run(*ptonnx.pymc.inputs_for(det_inputs, model, point)), det_fn(*args), strict=True):
                    close(a, e, f"{name} deterministics after set_data, point {k}, {level}")


# --- invalid parameters -------------------------------------------------------------------------

def logp_functions(model, **kwargs) -> dict:
    """The log-density as PyMC's compiled function, PyMC's with mode="ONNX" and ptonnx.pymc (both
    rewrite settings, every onnxruntime level) compute it: {how: point -> logp}, each compiled once."""
    functions = {"pymc": model.compile_logp(mode=PYMC_MODE), "mode ONNX": model.compile_logp(mode="ONNX")}
    for rewrite in (True, False):
        cm = ptonnx.pymc.compile_logp(model, rewrite=rewrite, grad=False, **kwargs)
        for level, run in at_levels(cm):
            functions[f"ptonnx.pymc rewrite={rewrite} {level}"] = functools.partial(
                lambda run, cm, point: run(*ptonnx.pymc.inputs_for(cm, model, point))[0], run, cm
            )
    return functions


def test_invalid_data_parameter_is_minus_inf():
    """sigma set by data to an invalid value: -inf, as PyMC's compiled functions give, never a finite number;
    with data as inputs (one model for every value) and frozen (a model per value)."""
    model = models.data_scale()
    point = model.initial_point()
    as_inputs = logp_functions(model, data="inputs")
    for scale in (-1.0, 0.0, -np.inf, 2.0):
        pm.set_data({"scale": scale}, model=model)
        values = {how: f(point) for how, f in {**as_inputs, **logp_functions(model)}.items()}
        for how, value in values.items():
            if scale > 0:
                close(value, values["pymc"], f"scale={scale} {how}")
            else:
                assert value == -np.inf, f"scale={scale} {how}: {value}"


def test_invalid_value_parameter_is_minus_inf():
    """A free variable used as a scale without a positivity transform: negative values give -inf
    (the plain graph, where the checks are not rewritten, raises PyMC's ParameterValueError, as PyTensor does)."""
    model = models.untransformed_scale()
    functions = logp_functions(model)
    for sigma in (-0.5, 0.0, 0.8):
        point = {"mu": np.array(0.3), "sigma": np.array(sigma)}
        values = {how: f(point) for how, f in functions.items()}
        for how, value in values.items():
            if sigma > 0:
                close(value, values["pymc"], f"sigma={sigma} {how}")
            else:
                assert value == -np.inf, f"sigma={sigma} {how}: {value}"
    raised = check_like_pytensor(model.value_vars, [model.logp()], [np.array(0.3), np.array(-0.5)], message="sigma > 0")
    assert isinstance(raised, ParameterValueError)


def test_check_bounds_false_is_like_pymc():
    """pm.Model(check_bounds=False): the checks are removed, as PyMC removes them (NaN, not -inf, for sigma < 0)."""
    model = models.untransformed_scale(check_bounds=False)
    functions = logp_functions(model)
    for sigma in (-0.5, 0.8):
        point = {"mu": np.array(0.3), "sigma": np.array(sigma)}
        values = {how: f(point) for how, f in functions.items()}
        assert np.isnan(values["pymc"]) == (sigma < 0)
        for how, value in values.items():
            close(value, values["pymc"], f"sigma={sigma} {how}")


def test_check_pymc_keeps_raises_like_pymc():
    """A parameter check PyMC may not turn into -inf raises PyMC's ParameterValueError from ptonnx too."""
    from pymc.distributions.dist_math import check_parameters

    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        pm.Potential("guard", check_parameters(pt.zeros(()), mu < 1, msg="mu < 1", can_be_replaced_by_ninf=False))
    point = {"mu": np.array(2.0)}
    with pytest.raises(ParameterValueError, match="mu < 1"):
        model.compile_logp(mode=PYMC_MODE)(point)
    cm = ptonnx.pymc.compile_logp(model)
    for level, run in at_levels(cm):
        with pytest.raises(ParameterValueError, match="mu < 1") as info:
            run(*ptonnx.pymc.inputs_for(cm, model, point))
        assert isinstance(info.value, CheckFailedError), level
        close(run(np.array(0.5))[0], model.compile_logp(mode=PYMC_MODE)({"mu": np.array(0.5)}), level)


# --- the API's edges ----------------------------------------------------------------------------

def test_discrete_free_variable_is_an_integer_input_without_gradient():
    with pm.Model() as model:
        z = pm.Bernoulli("z", 0.3)
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("obs", mu + z, 1, observed=np.array([0.5, 1.5, 1.0]))
    cm = ptonnx.pymc.compile_logp(model)
    assert cm.input_names == ["z", "mu"]
    assert cm.output_names == ["logp", "dlogp_mu"]
    assert cm.model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    logp_fn, dlogp_fn = model.compile_logp(mode=PYMC_MODE), model.compile_dlogp(mode=PYMC_MODE)
    for z_value in (0, 1):
        point = {"z": np.array(z_value), "mu": np.array(0.2)}
        for level, run in at_levels(cm):
            logp, grad = run(*ptonnx.pymc.inputs_for(cm, model, point))
            close(logp, logp_fn(point), f"z={z_value} {level}")
            close(np.ravel(grad), dlogp_fn(point), f"z={z_value} {level}")


def test_no_gradient_and_no_jacobian():
    model, pts, _ = built("eight_schools")
    cm = ptonnx.pymc.compile_logp(model, grad=False, jacobian=False)
    assert cm.output_names == ["logp"]
    reference = model.compile_logp(jacobian=False, mode=PYMC_MODE)
    for level, run in at_levels(cm):
        for k, point in enumerate(pts):
            close(run(*ptonnx.pymc.inputs_for(cm, model, point))[0], reference(point), f"point {k}, {level}")


def test_refusals():
    model, _, _ = built("eight_schools")
    with pytest.raises(ValueError, match="data='shared'"):
        ptonnx.pymc.compile_logp(model, data="shared")
    with pytest.raises(SignatureError, match="pymc.Model"):
        ptonnx.pymc.compile_logp(model.logp())
    with pm.Model() as empty:
        pm.Normal("obs", 0, 1, observed=np.zeros(3))
    with pytest.raises(SignatureError, match="no free variable"):
        ptonnx.pymc.compile_logp(empty)


def test_ptonnx_does_not_import_pymc():
    code = "import sys, ptonnx; assert 'pymc' not in sys.modules, 'ptonnx imported pymc'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_unchanged_by_export():
    """Exporting names nothing of the user's graph (a Deterministic that is a free variable keeps its name)."""
    with pm.Model() as model:
        a = pm.Normal("a", 0, 1)
        pm.Deterministic("a_again", a)
        pm.Normal("obs", a, 1, observed=np.zeros(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rewrite in (True, False):
            cm = ptonnx.pymc.compile_deterministics(model, rewrite=rewrite)
            assert cm.input_names == ["a"] and cm.output_names == ["a_again"]
            assert cm(np.array(0.25))[0] == 0.25
    assert [v.name for v in model.value_vars] == ["a"]
    assert model.logp().name == "__logp"
