"""Lazy branches: every node only one branch of an `If` needs moves into that branch.

PyTensor's IfElse evaluates only the branch taken; lifted as it is, an `If` would
receive both branches' values computed outside it. Moving a node whose results only
one body reads into that body (repeatedly, so whole chains move) makes the untaken
branch cost nothing, and a check in it (an index bound, an Assert) unable to fire.
A node other code also reads stays outside, as PyTensor computes it anyway. Loop
bodies are left alone: moving work into a loop repeats it.
"""

from __future__ import annotations

from ptonnx.ir.core import Graph, Node, Value, bodies

BRANCHES = ("then_body", "else_body")


def sink_into_branches(graph: Graph) -> int:
    """Make every If of `graph` and of its bodies lazy; returns how many nodes moved."""
    moved = 0
    for node in list(graph.reversed()):
        if node.op == "If" and node.graph is graph:
            moved += _sink(graph, node)
    for node in graph:
        for body in bodies(node):
            moved += sink_into_branches(body)
    return moved


def _readers(node: Node, index: int) -> list[str]:
    """The branches whose body reads If input `index` (> 0)."""
    return [key for key in BRANCHES if node.attrs[key].inputs[index - 1].num_uses]


def _owner_branch(graph: Graph, node: Node, producer: Node) -> str | None:
    """The one branch that alone reads the results of `producer`, if there is one."""
    if producer is None or producer.graph is not graph:
        return None
    found: set[str] = set()
    for out in producer.outputs:
        for user, index in out.uses:
            if user is not node or index == 0:
                return None
            found.update(_readers(node, index))
    return found.pop() if len(found) == 1 else None


def _sink(graph: Graph, node: Node) -> int:
    moved = 0
    _drop_unread(graph, node)
    while True:
        for value in node.inputs[1:]:
            branch = _owner_branch(graph, node, value.producer)
            if branch is not None:
                _move(graph, node, value.producer, branch)
                _drop_unread(graph, node)
                moved += 1
                break
        else:
            return moved


def _move(graph: Graph, node: Node, producer: Node, branch: str) -> None:
    """Rebuild `producer` at the start of `branch`'s body, reading its operands as new If inputs."""
    body = node.attrs[branch]
    inner_inputs = []
    for v in producer.inputs:
        if v.const is not None:
            inner_inputs.append(v)
            continue
        inner_inputs.append(_operand(graph, node, v, branch))
    outputs = [Value(o.type, o.name) for o in producer.outputs]
    clone = Node(producer.op, inner_inputs, outputs, producer.attrs, producer.name, producer.source)
    first = next(iter(body), None)
    if first is None:
        body.append(clone)
    else:
        body.insert_before(first, clone)
    for index, v in enumerate(node.inputs):
        if index and v.producer is producer:
            body.replace_all_uses(body.inputs[index - 1], outputs[v.index])
    _drop_unread(graph, node)
    graph.remove(producer)


def _operand(graph: Graph, node: Node, value: Value, branch: str) -> Value:
    """The body input of `branch` that receives outer `value` (a new If input if need be)."""
    for index, v in enumerate(node.inputs):
        if index and v is value:
            return node.attrs[branch].inputs[index - 1]
    for key in BRANCHES:
        node.attrs[key].inputs.append(Value(value.type, value.name))
    graph.set_inputs(node, [*node.inputs, value])
    return node.attrs[branch].inputs[-1]


def _drop_unread(graph: Graph, node: Node) -> None:
    """Remove the If inputs neither body reads."""
    keep = [0] + [i for i in range(1, len(node.inputs)) if _readers(node, i)]
    if len(keep) == len(node.inputs):
        return
    for key in BRANCHES:
        body = node.attrs[key]
        body.inputs = [body.inputs[i - 1] for i in keep[1:]]
    graph.set_inputs(node, [node.inputs[i] for i in keep])
