"""Fusion benchmark, the report: fusion.md (settings, tables) and fusion.png (see fusion.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from benchmarks.fusion_models import FUSED_PASSES, INPUT_SEED, SEED, UNFUSED_PASSES, VARIANTS
from benchmarks.fusion_reading import bn_share, hist, kernel_ms, opt, reading, same_ops
from benchmarks.fusion_timing import BATCH_S, CONFIGS, DUMP_LEVELS, NOISY_SPREAD, SETTLE_S, config_name

from ptonnx.models import SIGNAL_GAIN

#: ops shown in the op-histogram columns (ONNX domain "" unless prefixed)
SHOWN_OPS = ("Conv", "BatchNormalization", "Sigmoid", "Mul")


def _ms(ms: float) -> str:
    return f"{ms:.1f}" if ms >= 100 else f"{ms:.2f}" if ms >= 1 else f"{ms:.3f}"


def _runs(lat: dict) -> str:
    text = f"{lat['runs_each']} ({lat['rounds']}×{lat['batch']})"
    if lat.get("attempts", 1) > 1:
        text += ", 2nd try"
    return text + (" ⚠ noisy" if lat["noisy"] else "")


def _band(lat: dict) -> str:
    band = lat.get("noise_band")
    return f"[{band[0]:.3f}, {band[1]:.3f}]" if band else "–"


def _ratio_cell(lat: dict, bold: bool = True) -> str:
    lo, hi = lat["ci95"]
    text = f"{lat['ratio']:.3f} [{lo:.3f}, {hi:.3f}]"
    return f"**{text}**" if bold and lat["verdict"] != "no clear difference" else text


def markdown(results: list[dict], meta: dict) -> str:
    settings = meta.get("settings", {})
    cfgs = [config_name(*c) for c in CONFIGS]
    pass_names = [p for p in FUSED_PASSES]  # in run order
    L = [
        "# ptonnx: fused vs unfused (fuse_conv_bn_silu)",
        "",
        f"Measured {meta['date']} on {meta['machine']} ({meta['cpu']}, {meta['cpus']} CPUs, shared; load average "
        f"{meta['loadavg_start']} at start, {meta['loadavg_end']} at end), Python {meta['python']}, "
        f"pytensor {meta['pytensor']}, onnx {meta['onnx']}, onnxruntime {meta['onnxruntime']}, numpy {meta['numpy']}, "
        f"commit {meta['commit']}. Script runtime {meta['runtime_s']:.0f} s.",
        f"Command: `{meta['command']}`",
        "Settings: " + ", ".join(f"{k}={v}" for k, v in meta.get("settings", {}).items()) + ".",
        "",
        f"fused = `ptonnx.compile(fgraph)` (passes {', '.join(FUSED_PASSES)}); unfused = passes "
        f"{', '.join(UNFUSED_PASSES)}. Weights: `random_weights({SEED}, gain=SIGNAL_GAIN={SIGNAL_GAIN})` "
        f"(blocks: the same weights restricted to the block); input uniform [0, 1) float32, seed {INPUT_SEED}; batch 1. "
        "Blocks have the input shape they have inside YOLO11n for an image of the given size (@320, @640). "
        "Latency: onnxruntime CPU, `inter_op_num_threads=1`, `intra_op_num_threads` 1 or 2 (thr), "
        "`graph_optimization_level` ORT_DISABLE_ALL (no ORT opt) or ORT_ENABLE_ALL (ORT opt ALL). "
        "Each variant gets several sessions (`sessions` in the settings), used in turn round by round, because one session can be "
        "a few % faster or slower than another session of the same model for its whole life. "
        "Fused and unfused sessions run interleaved, so that their ratio is a same-time comparison: rounds of "
        f"one batch per variant (≥ 3 runs, ≥ {settings.get('batch_ms', BATCH_S * 1e3):.0f} ms, each run timed on its "
        "own), order flipped every round; "
        f"before each batch one untimed run and, with 2 threads, a {SETTLE_S * 1e3:.0f} ms pause (an idle onnxruntime "
        "thread pool keeps spinning for tens of ms after a run and would slow the other session down). "
        "Latency = median over the timed runs. "
        "ratio = fused / unfused, paired by round: the median over rounds of (median fused run / median unfused run "
        "in that round), so that a burst of load from another process, which hits both variants of a round, cancels "
        "out; **below 1 means fusion pays**; [brackets] = 95% bootstrap interval over rounds. "
        f"A measurement with p90/p10 > {NOISY_SPREAD:g} in either variant (a wide spread, e.g. from other load) is repeated once "
        "(the attempt with less spread is kept; \"⚠ noisy\" if both were wide). "
        + ("A/A control = the same measurement with two sets of sessions of the *same* (unfused) model, at half the "
           "budget: how far from 1.000 a ratio gets on this machine when nothing differs. Its interval, made symmetric "
           "around 1, is the noise band; **bold** = the fused/unfused interval lies entirely outside the noise band "
           "(verdict \"fused faster\"/\"fused slower\"), otherwise \"no clear difference\"."
           if settings.get("aa_control", True) else
           "No A/A control in this run (--quick or --no-aa-control): **bold** = the 95% interval excludes 1, which "
           "on this machine is NOT enough to call a difference real (sessions of one model differ by ~1–2% on their "
           "own; see a full run)."),
        "",
        "## Summary",
        "",
        "| workload | input | ONNX nodes unfused → fused | BN share of kernel time (unfused, no ORT opt, 1 thr) | "
        + " | ".join(f"ratio: {c}" for c in cfgs) + " | A/A control ratios (same 4 configs) |",
        "|---|---|---:|---:|" + "---:|" * len(cfgs) + "---:|",
    ]
    for r in results:
        aa = " / ".join(f"{r['aa_control'][c]['ratio']:.3f}" for c in cfgs if c in r["aa_control"]) or "–"
        L.append(
            f"| {r['label']} | {'×'.join(map(str, r['input_shape']))} | "
            f"{r['graph']['unfused']['onnx_nodes']} → {r['graph']['fused']['onnx_nodes']} | "
            f"{100 * bn_share(r):.1f}% | "
            + " | ".join(_ratio_cell(r["latency"][c]) for c in cfgs) + f" | {aa} |"
        )
    L += ["", "## Reading the numbers", ""]
    for para in reading(results):
        L += [para, ""]

    L += [
        "## Latency (ms per run)",
        "",
        "Median (p10–p90) over the runs; runs = timed runs per variant (rounds × batch). "
        "Session create = median time of one `InferenceSession(...)` construction (onnxruntime's graph optimisation "
        "included) over the sessions of the variant.",
        "",
        "| workload | config | unfused ms | fused ms | fused / unfused | verdict | A/A noise band | runs | session create ms unfused / fused |",
        "|---|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in results:
        for c in cfgs:
            lat = r["latency"][c]
            u, f = lat["unfused"], lat["fused"]
            sc = r["session_create_ms"][c]
            L.append(
                f"| {r['label']} | {c} | {_ms(u['median_ms'])} ({_ms(u['p10_ms'])}–{_ms(u['p90_ms'])}) | "
                f"{_ms(f['median_ms'])} ({_ms(f['p10_ms'])}–{_ms(f['p90_ms'])}) | {_ratio_cell(lat, bold=False)} | "
                f"{lat['verdict']} | {_band(lat)} | {_runs(lat)} | "
                f"{sc['unfused']:.1f} / {sc['fused']:.1f} |"
            )
            if c in r["aa_control"]:
                aa = r["aa_control"][c]
                L.append(
                    f"| {r['label']} | {c}, A/A control | {_ms(aa['unfused']['median_ms'])} "
                    f"({_ms(aa['unfused']['p10_ms'])}–{_ms(aa['unfused']['p90_ms'])}) | "
                    f"{_ms(aa['fused']['median_ms'])} ({_ms(aa['fused']['p10_ms'])}–{_ms(aa['fused']['p90_ms'])}) "
                    f"(2nd unfused session) | {_ratio_cell(aa, bold=False)} | (control) | "
                    f"| {_runs(aa)} | |"
                )

    L += [
        "",
        "## Graphs: what ptonnx emits and what onnxruntime runs",
        "",
        "ONNX nodes and op counts of ptonnx's model, then the node count of onnxruntime's optimized graph "
        "(dumped with `SessionOptions.optimized_model_filepath`) at each level. QuickGelu = com.microsoft QuickGelu "
        "(x·Sigmoid(αx), here α=1: SiLU); NCHWc = com.microsoft.nchwc ops. "
        "\"same ops\" = the fused and unfused optimized graphs have identical op histograms.",
        "",
        "| workload | variant | ONNX nodes | " + " | ".join(SHOWN_OPS) + " | other | model MB | "
        "ORT basic: nodes (BN) | ORT extended: nodes (QuickGelu) | ORT all: nodes (NCHWc) | same ops basic/ext/all |",
        "|---|---|---:|" + "---:|" * len(SHOWN_OPS) + "---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        for v in VARIANTS:
            g = r["graph"][v]
            other = g["onnx_nodes"] - sum(hist(r, v, op) for op in SHOWN_OPS)
            b, e, a = (opt(r, v, lvl) for lvl in DUMP_LEVELS)
            nchwc = sum(n for op, n in a["histogram"].items() if op.startswith("com.microsoft.nchwc:"))
            same = "/".join("yes" if same_ops(r, lvl) else "no" for lvl in DUMP_LEVELS) if v == "unfused" else ""
            L.append(
                f"| {r['label'] if v == 'unfused' else ''} | {v} | {g['onnx_nodes']} | "
                + " | ".join(str(hist(r, v, op)) for op in SHOWN_OPS)
                + f" | {other} | {g['model_bytes'] / 2**20:.2f} | "
                f"{b['nodes']} ({b['histogram'].get('BatchNormalization', 0)}) | "
                f"{e['nodes']} ({e['histogram'].get('com.microsoft:QuickGelu', 0)}) | "
                f"{a['nodes']} ({nchwc}) | {same} |"
            )

    L += [
        "",
        "## Where the time goes (ORT profiler, no ORT opt, 1 thread)",
        "",
        "Summed kernel time per run (ms) by op type, from onnxruntime's profiler (`enable_profiling`), "
        "warm-up runs dropped. The profiler adds overhead per node; compare with the unprofiled median.",
        "",
        "| workload | variant | profiled runs | Conv | BatchNormalization | Sigmoid + Mul | other | kernel sum | unprofiled median |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    one = config_name("DISABLE_ALL", 1)
    for r in results:
        for v in VARIANTS:
            k = kernel_ms(r, v)
            L.append(f"| {r['label'] if v == 'unfused' else ''} | {v} | {r['profile'][v]['runs']} | "
                     + " | ".join(_ms(k[c]) for c in ("Conv", "BatchNormalization", "Sigmoid+Mul", "other", "total"))
                     + f" | {_ms(r['latency'][one][v]['median_ms'])} |")

    stage_cols = ["lift", *pass_names, "lower", "check", "total"]
    L += [
        "",
        "## ptonnx compile time by stage (ms)",
        "",
        "Medians over the compiles (after one warm-up; fused and unfused alternate). lower includes the IR "
        "`verify` before lowering; check = `onnx.checker.check_model(full_check=True)`, part of `ptonnx.compile`; "
        "total = lift + passes (incl. pass-manager overhead) + lower + check. PyTensor graph building is not timed.",
        "",
        "| workload | variant | compiles | IR nodes after lift | " + " | ".join(stage_cols) + " | fusion rewrites |",
        "|---|---|---:|---:|" + "---:|" * len(stage_cols) + "---|",
    ]
    for r in results:
        for v in VARIANTS:
            c = r["compile"][v]
            recs = c["pass_records"]
            rewrites = ", ".join(f"{k} {n}" for k, n in recs.get("fuse_conv_bn_silu", {}).get("details", {}).items())
            cells = [f"{c[s] * 1e3:.2f}" if s in c else "–" for s in stage_cols]
            L.append(f"| {r['label'] if v == 'unfused' else ''} | {v} | {c['repeats']} | "
                     f"{next(iter(recs.values()))['nodes_before']} | " + " | ".join(cells) + f" | {rewrites} |")

    L += [
        "",
        "## Correctness",
        "",
        "Output of every session (2 variants × 4 configs) against PyTensor's own evaluation "
        "(`Mode(linker=\"py\", optimizer=None)`), `numpy.allclose` with the tolerance shown (float32; YOLO11n boxes "
        "are in input pixels), and fused against unfused (no ORT opt, 1 thread).",
        "",
        "| workload | tolerance | max abs diff vs PyTensor (all sessions) | worst diff / (atol + rtol·\\|ref\\|) | fused vs unfused max abs diff | max abs output | ok |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        ch = r["checks"]
        s = ch["sessions"].values()
        L.append(f"| {r['label']} | rtol={ch['tolerance']['rtol']:g}, atol={ch['tolerance']['atol']:g} | "
                 f"{max(x['max_abs'] for x in s):.2e} | {max(x['tol_used'] for x in s):.3f} | "
                 f"{ch['fused_vs_unfused_max_abs']:.2e} | {ch['ref_max_abs']:.3g} | {'yes' if ch['ok'] else '**NO**'} |")
    L += ["", "Chart: `fusion.png` (same directory).", ""]
    return "\n".join(L)


def chart(results: list[dict], path: Path, meta: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    cfgs = [config_name(*c) for c in CONFIGS]
    labels = [r["label"].replace(" @", "\n@") for r in results]
    colors = ["#9ecae1", "#3182bd", "#fdae6b", "#e6550d"]
    x = np.arange(len(results))
    width = 0.8 / len(cfgs)

    fig = plt.figure(figsize=(15, 11.5), constrained_layout=True)
    gs = fig.add_gridspec(3, 2, height_ratios=[1.15, 1, 1])
    ax = fig.add_subplot(gs[0, :])
    for i, c in enumerate(cfgs):
        ratios = np.array([r["latency"][c]["ratio"] for r in results])
        ci = np.array([r["latency"][c]["ci95"] for r in results])
        # bars grow from 1.0 (no difference): down = fused faster, up = fused slower
        noisy = [r["latency"][c]["noisy"] for r in results]
        ax.bar(x + (i - 1.5) * width, ratios - 1, width, bottom=1, color=colors[i], label=c,
               hatch=["//" if n else "" for n in noisy], edgecolor="white", linewidth=0,
               yerr=[ratios - ci[:, 0], ci[:, 1] - ratios], capsize=2, error_kw={"elinewidth": 0.8})
    for i, c in enumerate(cfgs):
        pts = [(j, r["aa_control"][c]["ratio"]) for j, r in enumerate(results) if c in r["aa_control"]]
        if pts:
            ax.plot([x[j] + (i - 1.5) * width for j, _ in pts], [v for _, v in pts], "kD", ms=4,
                    label="A/A control (same model twice)" if i == 0 else None)
    ax.axhline(1.0, color="black", lw=1)
    # the axis follows the ratios, not the intervals: a disturbed (hatched) cell's interval may run off it
    vals = [d[c]["ratio"] for r in results for d in (r["latency"], r["aa_control"]) for c in cfgs if c in d]
    ax.set_ylim(max(0.5, min(vals) - 0.04), min(1.5, max(vals) + 0.06))
    ax.set_xticks(x, labels, fontsize=9)
    ax.set_ylabel("latency fused / unfused\n(paired median; < 1 = fusion faster)")
    ax.set_title("Fused / unfused latency ratio per workload and onnxruntime config "
                 "(error bars: 95% bootstrap interval; hatched: wide spread, p90/p10 > 1.5)")
    ax.legend(ncols=5, loc="upper left", fontsize=9)
    ax.grid(axis="y", alpha=0.3)

    for i, c in enumerate(cfgs):
        a = fig.add_subplot(gs[1 + i // 2, i % 2])
        u = np.array([r["latency"][c]["unfused"]["median_ms"] for r in results])
        f = np.array([r["latency"][c]["fused"]["median_ms"] for r in results])
        a.bar(x - 0.2, u, 0.4, color="#bdbdbd", label="unfused")
        a.bar(x + 0.2, f, 0.4, color=colors[i], label="fused")
        a.set_yscale("log")
        lo, hi = min(u.min(), f.min()), max(u.max(), f.max())
        if hi / lo < 10:  # keep at least a decade so the log axis gets readable ticks
            mid = math.sqrt(lo * hi)
            a.set_ylim(mid / 4, mid * 4)
        a.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        a.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        a.set_xticks(x, [r["label"] for r in results], rotation=30, ha="right", fontsize=8)
        a.set_ylabel("median latency (ms, log scale)")
        a.set_title(f"onnxruntime CPU: {c}")
        a.legend(fontsize=8, loc="upper left")
        a.grid(axis="y", alpha=0.3, which="both")
    fig.suptitle(f"ptonnx fuse_conv_bn_silu: fused vs unfused (onnxruntime {meta['onnxruntime']}, "
                 f"{meta['cpus']}-CPU shared machine, {meta['date'][:10]})", fontsize=13)
    fig.savefig(path, dpi=110)
    plt.close(fig)
