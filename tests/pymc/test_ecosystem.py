"""What models built by the ecosystem's tools bring to `ptonnx.pymc`, written in plain PyMC:
value variable names that are not identifiers (bambi's `1|group_offset`) and XTensor value
variables (models built with pymc.dims, as pymc-marketing's MMM is). Each exports and
matches PyMC's compile_logp and compile_dlogp, at both onnxruntime levels."""

from __future__ import annotations

import numpy as np
import pytest

pm = pytest.importorskip("pymc")

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

import ptonnx.pymc  # noqa: E402
from tests.conftest import ORT_LEVELS, session_options  # noqa: E402
from tests.pymc import models  # noqa: E402
from tests.pymc.test_models import PYMC_MODE, close, flat_grads, points  # noqa: E402


@pytest.mark.parametrize("build", [models.bambi_names, models.dims_model], ids=lambda f: f.__name__)
@pytest.mark.parametrize("rewrite", [True, False])
def test_exports_and_matches_pymc(build, rewrite, tmp_path):
    model = build()
    path = tmp_path / "model.onnx"
    cm = ptonnx.pymc.export_logp(model, path, rewrite=rewrite)
    assert cm.input_names == [v.name for v in model.value_vars]
    onnx.checker.check_model(onnx.load(path), full_check=True)
    logp_fn, dlogp_fn = model.compile_logp(mode=PYMC_MODE), model.compile_dlogp(mode=PYMC_MODE)
    for level in ORT_LEVELS:
        session = ort.InferenceSession(str(path), session_options(level), providers=["CPUExecutionProvider"])
        for k, point in enumerate(points(model)):
            logp, *grads = session.run(None, {name: point[name] for name in cm.input_names})
            close(logp, logp_fn(point), f"{build.__name__} logp at point {k}, {level}")
            close(flat_grads(grads), dlogp_fn(point), f"{build.__name__} dlogp at point {k}, {level}")


def test_names_that_are_not_identifiers_name_the_inputs():
    model = models.bambi_names()
    cm = ptonnx.pymc.compile_logp(model)
    assert "1|group_offset" in cm.input_names and "dlogp_1|group_offset" in cm.output_names
    arrays = ptonnx.pymc.inputs_for(cm, model)
    np.testing.assert_allclose(cm(*arrays)[0], model.compile_logp()(model.initial_point()), rtol=1e-12)
