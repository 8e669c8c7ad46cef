"""Fusion benchmark, the "Reading the numbers" paragraphs of the report, written from the
measured data, and the accessors of a workload's results they share with the tables (see fusion.py)."""

from __future__ import annotations

import math
import statistics

from benchmarks.fusion_timing import DUMP_LEVELS, NOISY_SPREAD, config_name


def kernel_ms(res: dict, v: str) -> dict:
    """Profiled kernel ms per run, grouped: Conv, BatchNormalization, Sigmoid+Mul, other, total."""
    k = res["profile"][v]["kernel_ms"]
    out = {"Conv": k.get("Conv", 0.0), "BatchNormalization": k.get("BatchNormalization", 0.0),
           "Sigmoid+Mul": k.get("Sigmoid", 0.0) + k.get("Mul", 0.0)}
    out["other"] = res["profile"][v]["total_kernel_ms"] - sum(out.values())
    out["total"] = res["profile"][v]["total_kernel_ms"]
    return out


def bn_share(res: dict) -> float:
    k = kernel_ms(res, "unfused")
    return k["BatchNormalization"] / k["total"]


def hist(res: dict, v: str, op: str) -> int:
    return res["graph"][v]["histogram"].get(op, 0)


def opt(res: dict, v: str, level: str) -> dict:
    return res["ort_optimized"][v][level]


def same_ops(res: dict, level: str) -> bool:
    return opt(res, "fused", level)["histogram"] == opt(res, "unfused", level)["histogram"]


def reading(results: list[dict]) -> list[str]:
    """The "Reading the numbers" paragraphs, written from the measured data."""
    noopt = [config_name("DISABLE_ALL", t) for t in (1, 2)]
    allopt = [config_name("ENABLE_ALL", t) for t in (1, 2)]
    one = config_name("DISABLE_ALL", 1)

    def cells(names):
        return [(r, c, r["latency"][c]) for r in results for c in names]

    def span(items):
        vals = [lat["ratio"] for _, _, lat in items]
        return min(vals), max(vals), math.exp(statistics.fmean(math.log(v) for v in vals))

    def count(items, verdict):
        return sum(1 for _, _, lat in items if lat["verdict"] == verdict)

    out = []
    # --- the graphs
    big = max(results, key=lambda r: r["graph"]["unfused"]["onnx_nodes"])
    bn_gone = hist(big, "unfused", "BatchNormalization") - hist(big, "fused", "BatchNormalization")
    sig_same = all(hist(r, "fused", op) == hist(r, "unfused", op) for r in results for op in ("Sigmoid", "Mul"))
    out.append(
        f"**What fusion changes in the ONNX file.** The pass folds every BatchNormalization into its Conv "
        f"({big['label']}: {big['graph']['unfused']['onnx_nodes']} → {big['graph']['fused']['onnx_nodes']} nodes, "
        f"{bn_gone} BatchNormalization nodes gone). "
        + ("The SiLU half of the fusion does not shrink the ONNX graph: opset 18 has no SiLU operator, so a FusedConv "
           "with activation=silu is lowered back to Conv + Sigmoid + Mul, and the Sigmoid and Mul counts are the same "
           "in both variants. So the only run-time work fusion removes is one per-channel affine pass "
           "(BatchNormalization) over each conv output." if sig_same else
           "The Sigmoid/Mul counts differ between the variants (see the graph table).")
    )

    # --- noise
    aa_all = [(r, c, r["aa_control"][c]) for r in results for c in r["aa_control"]]
    judged = "beyond the A/A noise band" if aa_all else "with a 95% interval excluding 1"
    if aa_all:
        aa_lo, aa_hi, _ = span(aa_all)
        aa_sig = len(aa_all) - count(aa_all, "no clear difference")
        quiet = [(c, lat) for _, c, lat in aa_all if not lat["noisy"]]
        per_thr = {t: max((abs(lat["ratio"] - 1) for c, lat in quiet if c.endswith(f"{t} thr")), default=float("nan"))
                   for t in (1, 2)}
        every = [lat for r in results for d in (r["latency"], r["aa_control"]) for lat in d.values()]
        retried = sum(1 for lat in every if lat.get("attempts", 1) > 1)
        noisy = [f"{r['label']}, {c}{tag}" for r in results for d, tag in ((r["latency"], ""), (r["aa_control"], " (A/A)"))
                 for c, lat in d.items() if lat["noisy"]]
        out.append(
            f"**Noise.** The A/A control (the unfused model against a second set of sessions of itself, measured the "
            f"same interleaved way) gives ratios from {aa_lo:.3f} to {aa_hi:.3f}; {aa_sig} of {len(aa_all)} A/A "
            f"intervals exclude 1 although nothing differs. Leaving out disturbed cells, two sets of sessions of one "
            f"model differ by up to {100 * per_thr[1]:.1f}% at 1 thread and {100 * per_thr[2]:.1f}% at 2 threads. So a "
            f"fused/unfused difference is only counted when its interval lies outside the A/A noise band of the same "
            f"cell. "
            + (f"{retried} of {len(every)} measurements had a wide spread (p90/p10 > {NOISY_SPREAD:g}: other load "
               f"on the shared machine, or sub-millisecond runs on 2 threads) and were repeated; " if retried else
               f"No measurement had a wide spread (p90/p10 > {NOISY_SPREAD:g}, which would mean other load on the "
               f"shared machine), so none was repeated.")
            + ((f"{len(noisy)} still had it ({'; '.join(noisy)}), hatched in the chart and marked ⚠ in the latency "
                f"table; their ratios are unreliable." if noisy else "none still had it.") if retried else "")
        )

    # --- ORT optimizer off
    items = cells(noopt)
    lo, hi, gm = span(items)
    bn_shares = [bn_share(r) for r in results]
    conv_share = [kernel_ms(r, "unfused")["Conv"] / kernel_ms(r, "unfused")["total"] for r in results]
    saved = [(r, r["latency"][one]["unfused"]["median_ms"] - r["latency"][one]["fused"]["median_ms"],
              kernel_ms(r, "unfused")["BatchNormalization"]) for r in results]
    frac = [s_ / bn for _, s_, bn in saved if bn > 0]
    pairs = "; ".join(f"{r['label']} {s_:.3f} of {bn:.3f} ms" for r, s_, bn in saved)
    n_slower = count(items, "fused slower")
    n_none = count(items, "no clear difference")
    out.append(
        f"**With onnxruntime's optimizer off (ORT_DISABLE_ALL)**, i.e. running exactly the graph ptonnx emits, "
        f"fusion pays: fused/unfused ranges from {lo:.3f} to {hi:.3f} (geometric mean {gm:.3f}, a {100 * (1 - gm):.1f}% "
        f"saving; {span(cells([noopt[0]]))[2]:.3f} at 1 thread, {span(cells([noopt[1]]))[2]:.3f} at 2 threads); fused is "
        f"faster {judged} in {count(items, 'fused faster')} of {len(items)} cells"
        + (f", slower in {n_slower}" if n_slower else "")
        + (f", and {n_none} {'shows' if n_none == 1 else 'show'} no clear difference" if n_none else "")
        + (". The saving is bounded by what the BatchNormalization kernels cost" if max(frac) <= 1.05 else
           ". The saving is of the order of what the BatchNormalization kernels cost")
        + ": the ORT profiler (unfused, 1 thread) "
        f"puts BatchNormalization at {100 * min(bn_shares):.1f}–{100 * max(bn_shares):.1f}% of the kernel time, and the "
        f"measured saving per run (median unfused − median fused, 1 thread) is {100 * min(frac):.0f}–"
        f"{100 * max(frac):.0f}% (median {100 * statistics.median(frac):.0f}%) of the profiled BatchNormalization time "
        f"({pairs}; profile and latency come from separate runs, so single workloads scatter around the BN time). "
        f"The saving is larger at 2 threads "
        f"than at 1 in {sum(1 for r in results if r['latency'][noopt[1]]['ratio'] < r['latency'][noopt[0]]['ratio'])} "
        f"of {len(results)} workloads (not investigated; a plausible, unverified reason: the convolutions speed up "
        f"more with a second thread than memory-bound BatchNormalization does, so its share grows). It stays modest "
        f"because the convolutions "
        f"dominate ({100 * min(conv_share):.0f}–{100 * max(conv_share):.0f}% of the kernel time) and fusion does not "
        f"touch them."
    )

    # --- ORT optimizer on
    items = cells(allopt)
    lo, hi, gm = span(items)
    n_diff = len(items) - count(items, "no clear difference")
    basic_same = all(same_ops(r, "ENABLE_BASIC") for r in results)
    ext_same = all(same_ops(r, "ENABLE_EXTENDED") for r in results)
    all_same = all(same_ops(r, "ENABLE_ALL") for r in results)
    bn_left = sum(opt(r, "unfused", "ENABLE_BASIC")["histogram"].get("BatchNormalization", 0) for r in results)
    ex = big
    cnt = {lvl: (opt(ex, "unfused", lvl)["nodes"], opt(ex, "fused", lvl)["nodes"]) for lvl in DUMP_LEVELS}
    quick = opt(ex, "fused", "ENABLE_EXTENDED")["histogram"].get("com.microsoft:QuickGelu", 0)
    nchwc = opt(ex, "fused", "ENABLE_ALL")["histogram"].get("com.microsoft.nchwc:Conv", 0)
    aa = [(r, c, r["aa_control"][c]) for r in results for c in allopt if c in r["aa_control"]]
    sig_cells = [(r, c, lat) for r, c, lat in items if lat["verdict"] != "no clear difference"]
    sig = [f"{r['label']}, {c}: {lat['ratio']:.3f}" for r, c, lat in sig_cells]
    text = (
        f"**With onnxruntime's optimizer on (ORT_ENABLE_ALL)** fusion does not pay: fused/unfused ranges from "
        f"{lo:.3f} to {hi:.3f} (geometric mean {gm:.3f})"
    )
    if aa:
        aa_lo, aa_hi, aa_gm = span(aa)
        inside = lo >= aa_lo - 0.01 and hi <= aa_hi + 0.01
        text += (f", {'within about the range' if inside else 'against the range'} the A/A control gives in these "
                 f"configs ({aa_lo:.3f} to {aa_hi:.3f}, geometric mean {aa_gm:.3f})")
    text += (f"; {n_diff} of {len(items)} cells {'shows' if n_diff == 1 else 'show'} a difference {judged}"
             + (f" ({'; '.join(sig)})" if sig else "") + ".")
    if sig_cells and not aa_all:
        text += (" This run had no A/A control; on this machine two sessions of the same model differ by about as "
                 "much, so these intervals alone do not show a real difference (see a full run).")
    if sig_cells and aa_all:
        aa_max = max(abs(lat["ratio"] - 1) for _, c, lat in aa_all if not lat["noisy"])
        if all(abs(lat["ratio"] - 1) <= aa_max for _, _, lat in sig_cells):
            one_cell = len(sig_cells) == 1
            text += (f" {'It is' if one_cell else 'Each is'} smaller than the largest deviation between two sets of "
                     f"sessions of the same model ({100 * aa_max:.1f}%), and both variants run the same kernels "
                     f"(below), so we read {'it' if one_cell else 'them'} as noise.")
    if basic_same and all_same and bn_left == 0:
        text += (
            f" Fusion cannot pay here because onnxruntime does the same fusion itself when it loads the model: its "
            f"basic level (ConvBNFusion) folds every Conv + BatchNormalization ({bn_left} BatchNormalization nodes left "
            f"in any unfused graph after ORT_ENABLE_BASIC), so the optimized graphs of fused and unfused have identical "
            f"op histograms at every level dumped (basic, extended, all). The extended level also turns each "
            f"x·Sigmoid(x) into one com.microsoft QuickGelu node, in both variants"
            + ("" if ext_same else " (op histograms differ at that level)")
            + f", and ORT_ENABLE_ALL converts the convs to its NCHWc-blocked layout. {ex['label']}, nodes unfused/fused: "
            f"ptonnx {ex['graph']['unfused']['onnx_nodes']}/{ex['graph']['fused']['onnx_nodes']} → ORT basic "
            f"{cnt['ENABLE_BASIC'][0]}/{cnt['ENABLE_BASIC'][1]} → extended {cnt['ENABLE_EXTENDED'][0]}/"
            f"{cnt['ENABLE_EXTENDED'][1]} ({quick} QuickGelu) → all {cnt['ENABLE_ALL'][0]}/{cnt['ENABLE_ALL'][1]} "
            f"({nchwc} NCHWc convs). Both variants run the same kernels; only the folded weights differ in rounding."
        )
    else:
        text += (
            f" onnxruntime's optimized graphs of fused and unfused are {'identical' if basic_same else 'different'} at "
            f"the basic level and {'identical' if all_same else 'different'} at ORT_ENABLE_ALL "
            f"({bn_left} BatchNormalization nodes left after ORT basic); see the graph table."
        )
    out.append(text)

    ort_gain = [statistics.median(r["latency"][config_name("DISABLE_ALL", t)]["unfused"]["median_ms"]
                                  / r["latency"][config_name("ENABLE_ALL", t)]["unfused"]["median_ms"] for r in results)
                for t in (1, 2)]
    fusion_gain = statistics.median(1 / r["latency"][one]["ratio"] for r in results)
    out.append(
        f"**For scale:** onnxruntime's own optimizer (ORT_DISABLE_ALL → ORT_ENABLE_ALL, unfused model) speeds the "
        f"workloads up by a median factor of {ort_gain[0]:.2f} at 1 thread and {ort_gain[1]:.2f} at 2 threads; "
        f"ptonnx's fusion with ORT's optimizer off by a median factor of {fusion_gain:.3f} (1 thread). "
        f"Part of ORT's gain comes from onnxruntime-specific contrib ops (QuickGelu, NCHWc-blocked convs) that a "
        f"standard opset-18 model cannot contain."
    )
    allc = config_name("ENABLE_ALL", 1)
    sc = big["session_create_ms"][allc]
    sc_fast = sum(1 for r in results if r["session_create_ms"][allc]["fused"] < r["session_create_ms"][allc]["unfused"])
    head = ("Where fusion does pay with ORT's optimizer on: loading the model." if 2 * sc_fast > len(results)
            else "Session creation.")
    out.append(
        f"**{head}** With the fusion already done, "
        f"onnxruntime has less to fold when it loads the model: {big['label']} takes {sc['fused']:.1f} ms to load fused "
        f"vs {sc['unfused']:.1f} ms unfused (`InferenceSession` construction, ORT_ENABLE_ALL, 1 thread, median of "
        f"{big.get('sessions', '?')}); "
        f"the fused model loads faster in {sc_fast} of {len(results)} workloads. This is a one-off cost per session"
        + (f", smaller than what the fusion pass adds to ptonnx's compile of the same model "
           f"({big['compile']['fused']['total'] * 1e3 - big['compile']['unfused']['total'] * 1e3:.1f} ms, below)."
           if sc["unfused"] - sc["fused"] < (big["compile"]["fused"]["total"] - big["compile"]["unfused"]["total"]) * 1e3
           else ".")
    )

    rows = []
    for r in results:
        cf, cu = r["compile"]["fused"], r["compile"]["unfused"]
        rows.append((r["label"], cf.get("fuse_conv_bn_silu", 0.0) * 1e3, cf["total"] * 1e3, cu["total"] * 1e3,
                     (cf["lower"] + cf["check"]) * 1e3, (cu["lower"] + cu["check"]) * 1e3))
    eg = next((x for x in rows if x[0] == big["label"]), rows[-1])
    slower_compile = sum(1 for x in rows if x[2] > x[3])
    out.append(
        f"**Compile time:** the fusion pass takes {min(x[1] for x in rows):.2f}–{max(x[1] for x in rows):.2f} ms per "
        f"workload. {eg[0]}: fused compile {eg[2]:.1f} ms vs unfused {eg[3]:.1f} ms (fusion pass {eg[1]:.1f} ms; "
        f"lower + checker {eg[4]:.1f} ms fused vs {eg[5]:.1f} ms unfused"
        + (", cheaper with fewer nodes" if eg[4] < eg[5] else "")
        + f"). The fused compile is slower in {slower_compile} of {len(rows)} workloads"
        + (": the pass costs more than the smaller graph saves in lowering and checking." if 2 * slower_compile > len(rows)
           else ".")
    )
    return out

