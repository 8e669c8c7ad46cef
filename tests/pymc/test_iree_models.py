"""PyMC log-densities on the IREE runtime (`compile_logp(model, runtime="iree")`) against PyMC's
compiled logp and dlogp, as `test_models.py` compares the onnxruntime path."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ptonnx import iree_runtime
from tests.pymc.test_models import built, close

pm = pytest.importorskip("pymc")
if not iree_runtime.available():
    if os.environ.get("CI"):
        pytest.fail("CI runs the IREE tests: install ptonnx[iree]", pytrace=False)
    pytest.skip("IREE is not installed (pip install 'ptonnx[iree]')", allow_module_level=True)

import ptonnx.pymc  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")


#: special functions (gammaln, psi; erfc), indexing and constant scatters, and a Kalman filter's Scan (a Loop
#: in IREE's form: per-trip values written into carried buffers), a GP (empty static values as constants), the
#: SARIMAX filter (batched LU solves whose batch size IREE must see as static: `ir/dims.py`, ReduceProd); bg_nbd
#: (betaln) is run by the benchmark, not here, to keep CI's run short
@pytest.mark.parametrize("name", ["negative_binomial", "mixture", "censored_regression", "kalman_local_trend", "gp_marginal",
                                  "sarimax_arma11"])
def test_log_density_and_gradient_on_iree(name):
    model, pts, expected = built(name)
    cm = ptonnx.pymc.compile_logp(model, runtime="iree")
    assert cm.runtime == "iree"
    for k, (point, (logp, dlogp)) in enumerate(zip(pts, expected, strict=True)):
        got = cm(*ptonnx.pymc.inputs_for(cm, model, point))
        close(got[0], logp, f"{name} logp at point {k}")
        close(np.concatenate([np.ravel(g) for g in got[1:]]), dlogp, f"{name} gradient at point {k}")
