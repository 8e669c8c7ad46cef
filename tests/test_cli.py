"""The main job: `ptonnx` compiles, checks against PyTensor, times and writes a model."""

from __future__ import annotations

import onnx

from ptonnx.cli import main
from ptonnx.models import SIGNAL_GAIN


def test_default_main_job_on_a_small_yolo11n(tmp_path, capsys):
    path = tmp_path / "y.onnx"
    assert main(["--imgsz", "64", "--runs", "2", "-o", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"random weights (seed 0, gain {SIGNAL_GAIN:g})" in out.splitlines()[0]  # the gain's value, not its name
    assert "fuse_conv_bn_silu" in out and "conv+bn=81, conv+silu=77" in out
    assert out.count(" ok") == 2 and "MISMATCH" not in out and "fused / unfused" in out
    model = onnx.load(path)
    assert not any(n.op_type == "BatchNormalization" for n in model.graph.node)


def test_elementwise_example_with_ir(tmp_path, capsys):
    assert main(["--model", "elementwise", "--runs", "1", "--show-ir", "-o", str(tmp_path / "e.onnx")]) == 0
    out = capsys.readouterr().out
    assert "IR after lifting" in out and "const(2: i8[])" in out and "unify_dtypes" in out


def test_bad_weights_are_an_error_message_not_a_traceback(tmp_path, capsys):
    import numpy as np

    from ptonnx.models import random_weights

    weights = random_weights(0)
    weights.pop("model.0.conv.weight")
    np.savez(tmp_path / "bad.npz", **weights)
    assert main(["--weights", str(tmp_path / "bad.npz"), "--imgsz", "64"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptonnx: error:") and "model.0.conv.weight" in err and "Traceback" not in err
