"""Build the browser page's models: a fitted PyMC regression's posterior predictive and YOLO11n.

    python web/build.py [--out web/models] [--weights yolo11n.npz] [--imgsz 640]

Writes into `--out`:
- `predictive.onnx`: `ptonnx.pymc_predictive.export_predictive` of a linear regression
  (y = a + b x + noise) fitted by NUTS on synthetic data, with `x` a model input
  (`data="inputs"`): one call draws `obs` at every x for every posterior row, from a key;
- `predictive.json`: the posterior rows (the model's inputs), the observed points, the
  model's input and output names;
- `yolo11n.onnx` and `yolo11n.json`: the file `ptonnx --model yolo11n` writes (random weights
  unless `--weights` names Ultralytics' own, converted to .npz; the page says which), and
  `sample.png`, a synthetic picture to try it on.

Needs the PyMC environment (`.venv-pymc`). `make web` runs this, then serves `web/`.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: the synthetic data the regression is fitted to
TRUE_INTERCEPT, TRUE_SLOPE, TRUE_SIGMA, POINTS = 1.0, 2.0, 0.5, 40


def regression(out: Path, *, draws: int = 200, seed: int = 0) -> dict:
    """Fit the regression and write predictive.onnx and predictive.json; returns the json's content."""
    import pymc as pm

    import ptonnx.pymc_predictive as pp

    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2.0, 2.0, POINTS))
    y = TRUE_INTERCEPT + TRUE_SLOPE * x + rng.normal(scale=TRUE_SIGMA, size=POINTS)
    with pm.Model() as model:
        x_data = pm.Data("x", x)
        intercept = pm.Normal("intercept", 0, 10)
        slope = pm.Normal("slope", 0, 10)
        sigma = pm.HalfNormal("sigma", 2)
        pm.Normal("obs", intercept + slope * x_data, sigma, observed=y, shape=x_data.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            idata = pm.sample(draws=draws, tune=draws, chains=2, cores=1, random_seed=seed, progressbar=False,
                              compute_convergence_checks=False)
    cm = pp.export_predictive(model, out / "predictive.onnx", ["obs"], data="inputs")
    rows = dict(zip([v.name for v in cm.ir.inputs if v.name in idata.posterior], pp.inputs_from(cm, idata.posterior), strict=True))
    meta = {
        "inputs": cm.input_names, "outputs": cm.output_names,
        "rows": {name: a.tolist() for name, a in rows.items()},
        "observed": {"x": x.tolist(), "y": y.tolist()},
        "truth": {"intercept": TRUE_INTERCEPT, "slope": TRUE_SLOPE, "sigma": TRUE_SIGMA},
    }
    (out / "predictive.json").write_text(json.dumps(meta))
    return meta


def yolo(out: Path, *, imgsz: int = 640, weights: str | None = None) -> dict:
    """Compile YOLO11n as `ptonnx --model yolo11n` does and write yolo11n.onnx and yolo11n.json."""
    import ptonnx
    from ptonnx.api import function_graph
    from ptonnx.examples import yolo11n

    example = yolo11n(imgsz=imgsz, weights=weights)
    cm = ptonnx.compile(function_graph(example.inputs, example.outputs), name=example.name)
    cm.save(out / "yolo11n.onnx")
    meta = {"inputs": cm.input_names, "outputs": cm.output_names, "imgsz": imgsz, "description": example.description,
            "random_weights": weights is None}
    (out / "yolo11n.json").write_text(json.dumps(meta))
    return meta


def sample_image(path: Path, size: int = 640) -> Path:
    """A synthetic picture (sky, ground, a few shapes) as a PNG: what the page's test and the
    README's screenshot give YOLO11n, as a user would pick a file."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    rgb = np.stack([0.45 + 0.3 * yy, 0.65 + 0.2 * yy, 0.95 - 0.4 * yy], axis=-1)
    rgb[yy > 0.62] = (0.35, 0.55, 0.25)
    for cx, cy, r, colour in ((0.3, 0.6, 0.12, (0.8, 0.2, 0.15)), (0.7, 0.55, 0.09, (0.95, 0.85, 0.2))):
        rgb[(xx - cx) ** 2 + (yy - cy) ** 2 < r * r] = colour
    rgb[int(0.4 * size):int(0.7 * size), int(0.45 * size):int(0.58 * size)] = (0.25, 0.25, 0.3)
    pixels = (np.clip(rgb, 0, 1) * 255).astype(np.uint8)
    raw = b"".join(b"\x00" + row.tobytes() for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "models")
    parser.add_argument("--weights", default=None, help="YOLO11n weights: an .npz with Ultralytics state_dict names")
    parser.add_argument("--imgsz", type=int, default=640)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    regression(args.out)
    meta = yolo(args.out, imgsz=args.imgsz, weights=args.weights)
    sample_image(args.out / "sample.png", args.imgsz)
    print(f"wrote {args.out}/predictive.onnx, yolo11n.onnx ({meta['description']})")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main()
