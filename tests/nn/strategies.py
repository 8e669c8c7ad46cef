"""Hypothesis strategies for conv and pooling parameters (tiny shapes, valid by construction)."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def conv_params(draw, dtypes=("float32", "float64")):
    groups = draw(st.integers(1, 3))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    eff = (dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1)
    h = draw(st.integers(max(1, eff[0] - pads[0] - pads[2]), 7))
    w = draw(st.integers(max(1, eff[1] - pads[1] - pads[3]), 7))
    return dict(
        x_shape=(draw(st.integers(1, 2)), cg * groups, h, w),
        w_shape=(og * groups, cg, kh, kw),
        bias=draw(st.booleans()),
        stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        padding=pads,
        dilation=dilation,
        groups=groups,
        dtype=draw(st.sampled_from(dtypes)),
    )


@st.composite
def pool_params(draw, dtypes=("float32", "float64")):
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    pads = (
        draw(st.integers(0, kernel[0] // 2)),
        draw(st.integers(0, kernel[1] // 2)),
        draw(st.integers(0, kernel[0] // 2)),
        draw(st.integers(0, kernel[1] // 2)),
    )
    h = draw(st.integers(max(1, kernel[0] - pads[0] - pads[2]), 8))
    w = draw(st.integers(max(1, kernel[1] - pads[1] - pads[3]), 8))
    return dict(
        x_shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w),
        kernel=kernel,
        stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        padding=pads,
        ceil_mode=draw(st.booleans()),
        count_include_pad=draw(st.booleans()),
        dtype=draw(st.sampled_from(dtypes)),
    )
