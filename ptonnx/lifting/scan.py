"""PyTensor's `Scan` as the IR's `Loop`.

Scan's outer inputs are n_steps, then the sequences, the mit-mot, mit-sot and sit-sot
buffers, the untraced sit-sots (shared variables the loop updates), the sizes of the
nit-sot outputs, and the non-sequences. The Loop carries, per trip:

- a mit-mot's whole buffer (gradient scans read and write it at several taps);
- a mit-sot's window of its last L = -min(taps) values (a sit-sot's one value, itself);
- an untraced sit-sot's value, and for a while loop the number of trips done.

Sequences and non-sequences are read-only Loop inputs; the body gathers a sequence's
row at the trip number. Each trip's new mit-sot, sit-sot and nit-sot values are stacked
by the Loop (only for outputs something reads, and not where the window holds all
that is read). After the loop, an output buffer of size S is what PyTensor's Scan
leaves in it: of T = initial values + stacked values (length L + i after i trips), the
last S; where S > L + i, T then zeros, shortened by the trips a while loop skipped.
"""

from __future__ import annotations

import numpy as np
from pytensor.scan.op import Scan

from ptonnx.ir import TensorType, Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.context import LiftContext, ir_type
from ptonnx.lifting.dispatch import lifts
from ptonnx.lifting.lift import lift_applies


def _split(items, sizes):
    out, k = [], 0
    for n in sizes:
        out.append(list(items[k : k + n]))
        k += n
    out.append(list(items[k:]))
    return out


#: a constant the body reads is copied into it up to this many elements (else it is an invariant input)
SMALL_CONSTANT = 64


class _Parts:
    """Scan's inputs and outputs, outer and inner, grouped by kind."""

    def __init__(self, op, node):
        info = op.info
        self.info = info
        mm_in = [len(t) for t in info.mit_mot_in_slices]
        ms_in = [len(t) for t in info.mit_sot_in_slices]
        n_mm, n_ms, n_ss, n_un, n_nit = (
            info.n_mit_mot, info.n_mit_sot, info.n_sit_sot, info.n_untraced_sit_sot, info.n_nit_sot)
        (self.n_steps,), self.seqs, self.mit_mot, self.mit_sot, self.sit_sot, self.untraced, self.nit_sizes, self.non_seqs = _split(
            node.inputs, [1, info.n_seqs, n_mm, n_ms, n_ss, n_un, n_nit])
        (self.in_seqs, in_mm, in_ms, self.in_sit_sot, self.in_untraced, self.in_non_seqs) = _split(
            op.inner_inputs, [info.n_seqs, sum(mm_in), sum(ms_in), n_ss, n_un])
        self.in_mit_mot = _split(in_mm, mm_in)[:-1]
        self.in_mit_sot = _split(in_ms, ms_in)[:-1]
        mm_out = [len(t) for t in info.mit_mot_out_slices]
        (out_mm, self.out_mit_sot, self.out_sit_sot, self.out_nit_sot, self.out_untraced, until) = _split(
            op.inner_outputs, [sum(mm_out), n_ms, n_ss, n_nit, n_un])
        self.out_mit_mot = _split(out_mm, mm_out)[:-1]
        self.until = until[0] if info.as_while else None
        (self.res_mit_mot, self.res_mit_sot, self.res_sit_sot, self.res_nit_sot, self.res_untraced) = _split(
            node.outputs, [n_mm, n_ms, n_ss, n_nit])


def _row(ctx, array: Value, index: Value) -> Value:
    """array[index] (index an int64 scalar value)."""
    return ctx.op("Gather", array, index, axis=0)


def _rows(ctx, array: Value, start: Value, end: Value) -> Value:
    return ctx.op("Slice", array, ctx.pack([start]), ctx.pack([end]), ctx.ints([1]), axes=(0,))


def _add(ctx, a: Value, b: Value) -> Value:
    if a.const is not None and b.const is not None:
        return ctx.ints(a.const + b.const)
    return ctx.op("Add", a, b)


class _Body:
    """The Loop's body under construction: its inputs in order (trip, carried, invariants)."""

    def __init__(self, name: str):
        self.ctx = LiftContext(name)
        self.trip = self.ctx.graph.add_input(TensorType("int64", ()), "trip")
        self.carried: list[Value] = []      # outer initial values
        self.invariants: list[Value] = []   # outer values
        self._carried_in: list[Value] = []
        self._invariant_in: list[Value] = []

    def carry(self, outer: Value, name: str, inner_type: TensorType | None = None) -> Value:
        v = Value(inner_type or outer.type, name)
        self.carried.append(outer)
        self._carried_in.append(v)
        return v

    def read(self, outer: Value, name: str) -> Value:
        """A read-only outer value inside the body (one body input per outer value); a small
        constant stays a constant, so what must be static inside (a join axis) is."""
        if outer.const is not None and outer.const.size <= SMALL_CONSTANT:
            return Value.constant(outer.const, name)
        for o, v in zip(self.invariants, self._invariant_in, strict=True):
            if o is outer:
                return v
        v = Value(outer.type, name)
        self.invariants.append(outer)
        self._invariant_in.append(v)
        return v

    def finish(self) -> None:
        self.ctx.graph.inputs = [self.trip, *self._carried_in, *self._invariant_in]


def _name(var, fallback: str) -> str:
    return var.name or fallback


@lifts(Scan)
def lift_scan(ctx: LiftContext, node):
    op = node.op
    p = _Parts(op, node)
    info = p.info
    body = _Body(f"{op.name or 'scan'}_body")
    b = body.ctx
    n_steps = raw_steps = ctx.cast(ctx.value(p.n_steps), "int64")
    n_steps = check(ctx, n_steps, [ctx.op("GreaterOrEqual", n_steps, ctx.ints(0))],
                    "Scan was asked to run for negative number of step(s)", IndexError)

    # sequences: row `trip` of each (PyTensor gives each tap its own sliced sequence)
    seq_lengths = []
    for k, (outer, inner) in enumerate(zip(p.seqs, p.in_seqs, strict=True)):
        seq = ctx.value(outer)
        seq_lengths.append(ctx.op("GreaterOrEqual", ctx.dim(seq, 0), n_steps))
        b.values[inner] = _row(b, body.read(seq, _name(outer, f"seq{k}")), body.trip)
    if seq_lengths:
        n_steps = check(ctx, n_steps, seq_lengths, "Scan: a sequence is shorter than the Scan's required number of steps", ValueError)

    # mit-mot: the whole buffer, read and written at (trip + tap - min(in taps)) mod size
    mm_carried = []
    for k, (outer, ins, in_taps) in enumerate(zip(p.mit_mot, p.in_mit_mot, info.mit_mot_in_slices, strict=True)):
        buf = body.carry(ctx.value(outer), _name(outer, f"mit_mot{k}"))
        size = b.dim(buf, 0)
        low = min(in_taps)
        for var, tap in zip(ins, in_taps, strict=True):
            b.values[var] = _row(b, buf, b.op("Mod", _add(b, body.trip, b.ints(tap - low)), size))
        mm_carried.append((buf, size, low))

    # mit-sot and sit-sot: the window of the last L values (a sit-sot carries its value)
    windows = []
    for k, (outer, ins, taps) in enumerate(zip(p.mit_sot + p.sit_sot, p.in_mit_sot + [[v] for v in p.in_sit_sot],
                                             list(info.mit_sot_in_slices) + list(info.sit_sot_in_slices), strict=True)):
        buffer = ctx.value(outer)
        span = -min(taps)
        if list(taps) == [-1]:
            state = body.carry(_row(ctx, buffer, ctx.ints(0)), _name(outer, f"state{k}"))
            b.values[ins[0]] = state
        else:
            state = body.carry(_rows(ctx, buffer, ctx.ints(0), ctx.ints(span)), _name(outer, f"window{k}"))
            for var, tap in zip(ins, taps, strict=True):
                b.values[var] = _row(b, state, b.ints(span + tap))
        windows.append((buffer, state, span, list(taps) == [-1]))

    untraced = []
    for k, (outer, inner) in enumerate(zip(p.untraced, p.in_untraced, strict=True)):
        untraced.append(body.carry(ctx.value(outer), _name(outer, f"untraced{k}"), ir_type(inner)))
        b.values[inner] = untraced[-1]
    counter = body.carry(ctx.ints(0), "trips_done") if info.as_while else None

    for k, (outer, inner) in enumerate(zip(p.non_seqs, p.in_non_seqs, strict=True)):
        b.values[inner] = body.read(ctx.value(outer), _name(outer, f"non_seq{k}"))

    b.clients = op.fgraph.clients
    lift_applies(b, op.fgraph.toposort())

    # the body's outputs: keep going, the carried values, the stacked ones
    if p.until is not None:
        keep_going = b.op("Not", b.cast(b.value(p.until), "bool"))
    else:
        keep_going = Value.constant(np.array(True))
    new_carried = []
    for (buf, size, low), outs, out_taps in zip(mm_carried, p.out_mit_mot, info.mit_mot_out_slices, strict=True):
        for var, tap in zip(outs, out_taps, strict=True):
            at = b.op("Mod", _add(b, body.trip, b.ints(tap - low)), size)
            row = b.op("Unsqueeze", b.cast(b.value(var), buf.dtype), axes=(0,))
            buf_new = b.op("Concat", _rows(b, buf, b.ints(0), at), row,
                           _rows(b, buf, _add(b, at, b.ints(1)), size), axis=0)
            buf = buf_new
        new_carried.append(buf)
    for (buffer, state, span, single), var in zip(windows, p.out_mit_sot + p.out_sit_sot, strict=True):
        new = b.cast(b.value(var), state.dtype)
        if single:
            new_carried.append(new)
        else:
            last = _rows(b, state, b.ints(1), b.ints(span))
            new_carried.append(b.op("Concat", last, b.op("Unsqueeze", new, axes=(0,)), axis=0))
    for state, var in zip(untraced, p.out_untraced, strict=True):
        new_carried.append(b.cast(b.value(var), state.dtype))
    if counter is not None:
        new_carried.append(b.op("Add", body.trip, b.ints(1)))

    # what is stacked: a traced output whose buffer the window does not already hold
    stacked, plans = [], []
    for (buffer, state, span, single), var, res in zip(windows, p.out_mit_sot + p.out_sit_sot, p.res_mit_sot + p.res_sit_sot, strict=True):
        size = ctx.dim(buffer, 0)
        if not _used(ctx, res):
            plans.append(None)
        elif size.const is not None and int(size.const) <= span:
            plans.append(("window", int(size.const)))
        else:
            plans.append(("trace", len(stacked)))
            stacked.append(b.cast(b.value(var), state.dtype))
    nit_plans = []
    for var, res in zip(p.out_nit_sot, p.res_nit_sot, strict=True):
        if not _used(ctx, res):
            nit_plans.append(None)
            continue
        nit_plans.append(len(stacked))
        stacked.append(b.value(var))

    body.finish()
    b.graph.set_outputs([keep_going, *new_carried, *stacked])
    loop = ctx.builder.node(
        "Loop", [n_steps, Value.constant(np.array(True)), *body.carried, *body.invariants],
        dict(body=b.graph, n_carried=len(body.carried), n_scan=len(stacked)),
    )
    finals = list(loop.outputs[: len(body.carried)])
    traces = list(loop.outputs[len(body.carried):])
    trips = finals[-1] if counter is not None else n_steps

    results = finals[: len(mm_carried)]
    finals = finals[len(mm_carried):]
    for (buffer, state, span, single), final, plan, res in zip(windows, finals, plans, p.res_mit_sot + p.res_sit_sot, strict=False):  # finals goes on: the untraced values, the trip counter
        if plan is None:
            results.append(buffer)  # unread: any value of its type
        elif plan[0] == "window":
            window = ctx.op("Unsqueeze", final, axes=(0,)) if single else final
            results.append(_rows(ctx, window, ctx.ints(span - plan[1]), ctx.ints(span)) if plan[1] < span else window)
        else:
            rows = ctx.op("Reshape", traces[plan[1]], ctx.op("Concat", ctx.pack([trips]), ctx.shape_of(buffer, 1), axis=0))
            whole = ctx.op("Concat", _rows(ctx, buffer, ctx.ints(0), ctx.ints(span)), rows, axis=0)
            results.append(_as_buffer(ctx, whole, ctx.dim(buffer, 0), span, trips, n_steps))
    finals = finals[len(windows):]
    for plan, size_var in zip(nit_plans, p.nit_sizes, strict=True):
        if plan is None:
            results.append(None)
            continue
        size = ctx.cast(ctx.value(size_var), "int64")
        trace = traces[plan]
        results.append(trace if size is raw_steps else _as_buffer(ctx, trace, size, 0, trips, n_steps))
    results += finals[: len(untraced)]
    return [r if r is not None else _unread(ctx, res) for r, res in zip(results, node.outputs, strict=True)]


def _used(ctx, var) -> bool:
    """Whether anything reads the outer output `var` (Scan outputs nobody reads are common)."""
    clients = ctx.clients
    return clients is None or var not in clients or bool(clients[var])


def _unread(ctx, var) -> Value:
    """A stand-in for an output nothing reads: an empty array of its dtype and rank."""
    t = ir_type(var)
    return Value.constant(np.zeros((0,) * t.ndim, t.dtype))


def _as_buffer(ctx, whole: Value, size: Value, span: int, trips: Value, n_steps: Value) -> Value:
    """What a Scan buffer of `size` rows holds after `trips` trips of `n_steps`, `whole`
    being its initial rows and every trip's value (span + trips rows): the last `size`
    of them; where `size` is larger, they then zeros, `n_steps - trips` rows fewer."""
    count = _add(ctx, ctx.ints(span), trips)
    start = ctx.op("Max", ctx.op("Sub", count, size), ctx.ints(0))
    kept = _rows(ctx, whole, start, count)
    pad = ctx.op("Max", ctx.op("Sub", ctx.op("Sub", size, n_steps), ctx.ints(span)), ctx.ints(0))
    if pad.const is not None and int(pad.const) == 0:
        return kept
    zeros = ctx.op("Expand", Value.constant(np.zeros((), whole.dtype)),
                   ctx.op("Concat", ctx.pack([pad]), ctx.shape_of(whole, 1), axis=0))
    return ctx.op("Concat", kept, zeros, axis=0)
