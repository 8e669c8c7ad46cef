"""The browser page (`web/`) in a real browser: headless Chromium opens it, onnxruntime-web
(WebAssembly) runs ptonnx's two models (a fitted regression's posterior predictive, YOLO11n),
and the numbers are onnxruntime's in Python at both levels for the same inputs and key.

Needs Node, `web/node_modules` (`cd web && npm ci`) and Chromium (`CHROMIUM`, default Debian's
/usr/bin/chromium); `.ci/run` installs them, so under CI a missing one fails the test.
`PTONNX_SCREENSHOT=docs/images/browser.png` saves the page as the test saw it (the README's picture)."""

from __future__ import annotations

import base64
import functools
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from tests.conftest import ORT_LEVELS, session_options

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
#: the x values the predictive runs at: a grid, then the ends of the range (NaN, infinities, signed
#: zeros, the least subnormal, huge magnitudes)
XS = [np.linspace(-3.0, 3.0, 13),
      np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e300, -1e300, 1.7976931348623157e308, np.inf, -np.inf, np.nan]),
      np.zeros(0)]
KEYS = [[0, 0], [0, 7], [0xFFFFFFFF, 0xFFFFFFFF]]
YOLO_SCORE_ATOL, YOLO_BOX_ATOL = 1e-4, 2e-2  # float32 through 88 convolutions; boxes are in pixels


def _missing() -> list[str]:
    missing = [what for what, ok in (("node", shutil.which("node")), ("web/node_modules (cd web && npm ci)",
                                     (WEB / "node_modules" / "playwright-core").is_dir()),
                                     (f"Chromium at {CHROMIUM}", Path(CHROMIUM).exists())) if not ok]
    return missing


def _build_module():
    spec = importlib.util.spec_from_file_location("ptonnx_web_build", WEB / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()


def _unpack(t: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(t["data"]), dtype=t["type"]).reshape(t["dims"])


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page served from a temporary folder (web/'s files, freshly built models), run once by
    check.mjs on every request below; yields (request, result, models folder)."""
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test needs {', '.join(missing)}; .ci/run installs them")
        pytest.skip(f"the browser test needs {', '.join(missing)} (.ci/run installs them)")
    root = tmp_path_factory.mktemp("web")
    for name in ("index.html", "app.js", "node_modules"):
        (root / name).symlink_to(WEB / name)
    models = root / "models"
    models.mkdir()
    build = _build_module()
    build.regression(models, draws=100)
    build.yolo(models)
    build.sample_image(models / "sample.png", 640)
    image = np.random.default_rng(0).uniform(0, 1, (1, 3, 640, 640)).astype(np.float32)
    request = {"predictive": [{"xs": _b64(xs), "key": k} for xs in XS for k in KEYS[:2]] + [{"xs": _b64(XS[0]), "key": KEYS[2]}],
               "yolo": [_b64(image)]}
    (root / "request.json").write_text(json.dumps(request))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        done = subprocess.run(["node", str(WEB / "check.mjs"), url, str(root / "request.json"), str(root / "result.json"),
                               str(root / "page.png"), str(models / "sample.png")],
                              capture_output=True, text=True, timeout=600, env={**os.environ, "CHROMIUM": CHROMIUM})
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads((root / "result.json").read_text())
        if os.environ.get("PTONNX_SCREENSHOT"):  # the README's picture: docs/images/browser.png
            shutil.copy(root / "page.png", os.environ["PTONNX_SCREENSHOT"])
    finally:
        server.shutdown()
    yield request, result, models, root


def _onnxruntime(path: Path, feeds: dict) -> dict[str, np.ndarray]:
    runs = {}
    for level in ORT_LEVELS:
        session = ort.InferenceSession(str(path), session_options(level), providers=["CPUExecutionProvider"])
        runs[level] = session.run(None, feeds)[0]
    return runs


def test_the_page_loads_both_models_and_draws_the_band(page):
    _, result, _, root = page
    assert result["status"].startswith("ready (onnxruntime-web"), result["status"]
    assert result["drawn"]["band"].startswith("obs at x = 1.00: median"), result["drawn"]
    assert "top score" in result["drawn"]["yolo"], result["drawn"]
    assert (root / "page.png").stat().st_size > 10_000


def test_predictive_draws_in_the_browser_are_onnxruntimes_bit_for_bit(page):
    """Float64 draws at the same key: byte-identical (the issue asks 1e-12; the draws use only ops
    IEEE 754 rounds exactly, so WebAssembly and x86 agree to the bit), at both onnxruntime levels,
    with x at the ends of the range and of size 0."""
    request, result, models, _ = page
    meta = json.loads((models / "predictive.json").read_text())
    assert len(result["predictive"]) == len(request["predictive"])
    for asked, got in zip(request["predictive"], result["predictive"], strict=True):
        xs = np.frombuffer(base64.b64decode(asked["xs"]), dtype=np.float64)
        feeds = {name: np.asarray(rows) for name, rows in meta["rows"].items()}
        feeds |= {"x": xs, "key": np.asarray(asked["key"], dtype=np.uint32)}
        web = _unpack(got)
        for level, expected in _onnxruntime(models / "predictive.onnx", feeds).items():
            assert web.dtype == expected.dtype == np.float64 and web.shape == expected.shape == (100 * 2, xs.size), level
            assert web.tobytes() == expected.tobytes(), (level, asked["key"], np.flatnonzero(web.ravel() != expected.ravel())[:5])
    first = _unpack(result["predictive"][0])
    assert np.isfinite(first).all() and first.std() > 0  # draws, not a constant


def test_yolo_in_the_browser_is_onnxruntimes(page):
    request, result, models, _ = page
    image = np.frombuffer(base64.b64decode(request["yolo"][0]), dtype=np.float32).reshape(1, 3, 640, 640)
    web = _unpack(result["yolo"][0])
    session = ort.InferenceSession(str(models / "yolo11n.onnx"), providers=["CPUExecutionProvider"])
    for level, expected in _onnxruntime(models / "yolo11n.onnx", {session.get_inputs()[0].name: image}).items():
        assert web.shape == expected.shape == (1, 84, 8400), level
        np.testing.assert_allclose(web[:, 4:], expected[:, 4:], rtol=0, atol=YOLO_SCORE_ATOL, err_msg=level)
        np.testing.assert_allclose(web[:, :4], expected[:, :4], rtol=0, atol=YOLO_BOX_ATOL, err_msg=level)
    assert expected[:, 4:].max() > 0.1  # scores that say something
