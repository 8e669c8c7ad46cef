"""Dev-only check: ptonnx.models.yolo11n against Ultralytics' own YOLO11n (PyTorch), output by output.

Not a test dependency. It needs a separate throwaway venv with torch and
ultralytics, because those must not enter the project's environment:

    python3 -m venv /tmp/ultra-venv
    /tmp/ultra-venv/bin/pip install torch==2.13.0            # the local CPU wheel
    /tmp/ultra-venv/bin/pip install --no-deps ultralytics==8.4.190 torchvision==0.28.0 \\
        numpy pyyaml opencv-python-headless pillow psutil requests \\
        charset-normalizer idna urllib3 certifi
    # (torchvision is only read for its version at `import ultralytics`; it is never imported)

    .venv/bin/python -m benchmarks.check_against_ultralytics --torch-python /tmp/ultra-venv/bin/python

The project's python writes our random weights, runs this same file under the
torch python (`--torch-side`), which builds `DetectionModel("yolo11n.yaml")`,
loads each weight set, and saves its state_dict (minus num_batches_tracked), a
fixed input and the eval output; then the project's python loads each
state_dict into `ptonnx.models.yolo11n` and compares the outputs.

Weight sets: "ultralytics-init" (Ultralytics' own init: BN gamma=1, beta=0,
mean=0, var=1), "ultralytics-init-bn-gain" (its conv weights times
SIGNAL_GAIN and random BN statistics, so the input matters at the output),
and "ptonnx-random" (`random_weights(0, SIGNAL_GAIN)` loaded into torch with
strict=True, which also proves that our names and shapes are Ultralytics').
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

VARIANTS = ("ultralytics-init", "ultralytics-init-bn-gain", "ptonnx-random")


def torch_side(workdir: str, imgsz: int, gain: float) -> None:
    """Runs under the torch venv: one npz per variant with the state_dict, the input and the output."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", workdir)
    import torch
    from ultralytics.nn.tasks import DetectionModel

    torch.manual_seed(0)
    model = DetectionModel("yolo11n.yaml", verbose=False).eval()
    pristine = {k: v.clone() for k, v in model.state_dict().items()}
    image = torch.from_numpy(np.random.default_rng(1).uniform(0, 1, (1, 3, imgsz, imgsz)).astype(np.float32))
    gen = torch.Generator().manual_seed(2)
    for variant in VARIANTS:
        model.load_state_dict(pristine)
        with torch.no_grad():
            if variant == "ultralytics-init-bn-gain":
                for name, module in model.named_modules():
                    if isinstance(module, torch.nn.Conv2d) and not name.endswith("dfl.conv"):
                        module.weight.mul_(gain)
                    if isinstance(module, torch.nn.BatchNorm2d):
                        c = module.num_features
                        module.weight.copy_(torch.rand(c, generator=gen) + 0.5)
                        module.bias.copy_(torch.randn(c, generator=gen) * 0.1)
                        module.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
                        module.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.5)
            elif variant == "ptonnx-random":
                ours = np.load(os.path.join(workdir, "ptonnx-random-in.npz"))
                state = {k: torch.from_numpy(ours[k]) for k in ours.files}
                state.update({k: v for k, v in pristine.items() if k.endswith("num_batches_tracked")})
                model.load_state_dict(state, strict=True)
            t0 = time.perf_counter()
            y = model(image)[0]
            seconds = time.perf_counter() - t0
            y64 = model.double()(image.double())[0]  # float64 reference: how much of a gap is float32 rounding
            model.float()
        state = {k: v.numpy() for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
        np.savez(
            os.path.join(workdir, f"{variant}.npz"),
            __names__=np.array(list(state)), __image__=image.numpy(), __output__=y.numpy(), __output64__=y64.numpy(),
            __seconds__=np.float64(seconds), **state,
        )


def compare(workdir: str, imgsz: int) -> bool:
    import pytensor
    from pytensor.compile.mode import Mode

    from ptonnx.models import yolo11n, yolo11n_state_dict_spec

    spec = yolo11n_state_dict_spec()
    ok = True
    for variant in VARIANTS:
        data = np.load(os.path.join(workdir, f"{variant}.npz"))
        names = list(data["__names__"])
        weights = {k: data[k] for k in names}
        same_order = names == list(spec) and all(weights[k].shape == spec[k] for k in spec)
        x, y = yolo11n(weights, imgsz=imgsz)
        f = pytensor.function([x], y, mode=Mode(linker="py", optimizer=None))
        t0 = time.perf_counter()
        ours = f(data["__image__"])
        seconds = time.perf_counter() - t0
        ref, ref64 = data["__output__"], data["__output64__"]
        diff = np.abs(ours.astype(np.float64) - ref)
        rel = diff / np.maximum(np.abs(ref), 1e-6)
        ours_err, torch_err = np.abs(ours - ref64), np.abs(ref - ref64)
        close = np.allclose(ours, ref, rtol=1e-3, atol=1e-3)
        # float32 rounding, amplified by the network, is the only excuse for a gap: ours must be
        # about as close to the float64 result as torch's own float32 run is
        as_accurate = ours_err.max() <= 4 * torch_err.max() + 1e-5
        ok &= bool((close or as_accurate) and same_order)
        print(
            f"{variant}: shape {ours.shape}; names, shapes and order == spec: {same_order}\n"
            f"  ours vs torch float32: max|diff| {diff.max():.3g} (boxes {diff[:, :4].max():.3g} px, "
            f"scores {diff[:, 4:].max():.3g}), max rel {rel.max():.3g}, allclose(rtol=atol=1e-3): {close}\n"
            f"  vs torch float64: ours max|err| {ours_err.max():.3g} (mean {ours_err.mean():.3g}), "
            f"torch float32 max|err| {torch_err.max():.3g} (mean {torch_err.mean():.3g})\n"
            f"  output spread: box std {ref[:, :4].std():.3g}, score std {ref[:, 4:].std():.3g}; "
            f"time torch {float(data['__seconds__']):.2f}s, pytensor {seconds:.2f}s"
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch-python", default="/tmp/ultra-venv/bin/python", help="python of the torch+ultralytics venv")
    parser.add_argument("--imgsz", type=int, default=320)
    parser.add_argument("--torch-side", metavar="WORKDIR", help=argparse.SUPPRESS)
    parser.add_argument("--gain", type=float, default=None, help="conv gain of the signal-carrying variants (default SIGNAL_GAIN)")
    args = parser.parse_args()
    if args.torch_side:
        torch_side(args.torch_side, args.imgsz, args.gain)
        return 0
    from ptonnx.models import SIGNAL_GAIN, random_weights

    gain = SIGNAL_GAIN if args.gain is None else args.gain
    with tempfile.TemporaryDirectory() as workdir:
        np.savez(os.path.join(workdir, "ptonnx-random-in.npz"), **random_weights(0, gain))
        cmd = [args.torch_python, os.path.abspath(__file__), "--torch-side", workdir, "--imgsz", str(args.imgsz), "--gain", str(gain)]
        subprocess.run(cmd, check=True)
        return 0 if compare(workdir, args.imgsz) else 1


if __name__ == "__main__":
    sys.exit(main())
