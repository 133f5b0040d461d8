"""An array namespace whose arrays are the values of an ONNX graph being built: how a brain
written once (`IArrayBrain`) gets its ONNX form without its math written a second time.

A brain's `forward` is written against an array namespace `xp` (numpy, or `jax.numpy` for its
JAX form). Called with `OnnxGraph().xp` on `OnnxTensor`s, every operation it makes on a tensor
appends the ONNX node that computes it, so the exported step is the brain's own arithmetic,
operation for operation, traced as JAX traces it. The parameters stay numpy arrays (the genome
decoded by `params(numpy, ...)`): an operation of a tensor with one makes it an initializer of
the graph; an operation of numpy arrays alone is numpy's, computed here once (a bias reshaped,
say). Shapes are static (one observation, a leading axis of one row), so reshapes, slices and
shape arithmetic in the brain's code see plain integers.

What is translated: the arithmetic operators, comparisons, basic slicing (and one integer
array index, a gather), `reshape`, `transpose`, `astype`, and the namespace functions below.
Anything else (a numpy function called on a tensor, `if` on an array's value, an `xp` function
not here) raises `OnnxUnsupported` naming it, which the export says in one line (numpy's ufuncs
refuse a tensor with a TypeError, which `array_onnx.py` says so too). The numbers
are float64 where the brain computes in float64: onnxruntime runs every operator used here in
double.

onnx is an optional extra of evo-core (`evo-core[onnx]`): imported by the functions that make
inputs, nodes and models, never when this module is imported.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core._version import __version__

__all__ = ["OPSET", "OnnxGraph", "OnnxNamespace", "OnnxTensor", "OnnxUnsupported"]

#: The ONNX operator set the graphs use (onnxruntime 1.13 and later run it)
OPSET = 17
#: The IR version the models declare: the oldest that carries `OPSET`, so older runtimes load them
IR_VERSION = 8


class OnnxUnsupported(Exception):
    """A brain's step does something this translation has no ONNX form for; the message names
    it."""


def _onnx_type(dtype: np.dtype[Any]) -> int:
    from onnx import helper

    return int(helper.np_dtype_to_tensor_dtype(dtype))


def _dtype_of(value: Any) -> Any:
    """The dtype numpy's promotion sees: a tensor's or an array's, or the Python scalar itself
    (a weak type: `x * 0.5` keeps x's float type)."""
    if isinstance(value, OnnxTensor | np.ndarray | np.generic):
        return value.dtype
    return value


class OnnxTensor:
    """A value of the graph: its name, static shape and dtype. Operators on it append nodes;
    numpy defers to them (`__array_ufunc__ = None`), so `array + tensor` is a node too."""

    __array_ufunc__ = None

    def __init__(self, graph: OnnxGraph, name: str, shape: tuple[int, ...],
                 dtype: np.dtype[Any]) -> None:
        self.graph = graph
        self.name = name
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def T(self) -> OnnxTensor:
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"OnnxTensor({self.name!r}, shape={self.shape}, dtype={self.dtype})"

    def __bool__(self) -> bool:
        raise OnnxUnsupported("the step branches on an array's value (`if` on an array), "
                              "which a graph cannot")

    def __iter__(self) -> Any:
        raise OnnxUnsupported("the step iterates over an array's values, which a graph cannot")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise OnnxUnsupported("the step hands an array to numpy itself (np.asarray(x), say) "
                              "instead of to its namespace xp")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise OnnxUnsupported(f"the step calls numpy.{func.__name__} on an array instead of "
                              f"xp.{func.__name__}")

    def __add__(self, other: Any) -> Any:
        return self.graph.xp.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return self.graph.xp.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return self.graph.xp.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return self.graph.xp.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return self.graph.xp.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return self.graph.xp.multiply(other, self)

    def __truediv__(self, other: Any) -> Any:
        return self.graph.xp.divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return self.graph.xp.divide(other, self)

    def __matmul__(self, other: Any) -> Any:
        return self.graph.xp.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return self.graph.xp.matmul(other, self)

    def __neg__(self) -> OnnxTensor:
        return self.graph.unary("Neg", self)

    def __abs__(self) -> OnnxTensor:
        return self.graph.unary("Abs", self)

    def __gt__(self, other: Any) -> Any:
        return self.graph.compare("Greater", self, other)

    def __lt__(self, other: Any) -> Any:
        return self.graph.compare("Less", self, other)

    def __ge__(self, other: Any) -> Any:
        return self.graph.compare("GreaterOrEqual", self, other)

    def __le__(self, other: Any) -> Any:
        return self.graph.compare("LessOrEqual", self, other)

    def __eq__(self, other: Any) -> Any:
        return self.graph.compare("Equal", self, other)

    def __and__(self, other: Any) -> Any:
        return self.graph.logical("And", self, other)

    def __rand__(self, other: Any) -> Any:
        return self.graph.logical("And", other, self)

    def __or__(self, other: Any) -> Any:
        return self.graph.logical("Or", self, other)

    def __ror__(self, other: Any) -> Any:
        return self.graph.logical("Or", other, self)

    __hash__ = None  # type: ignore[assignment]  # compares elementwise, as an array does

    def reshape(self, *shape: Any) -> OnnxTensor:
        wanted = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) \
            else shape
        target = _reshaped(self.shape, wanted)
        if target == self.shape:
            return self
        return self.graph.node("Reshape", [self, self.graph.constant(
            np.array(target, dtype=np.int64))], target, self.dtype)

    def transpose(self, *axes: Any) -> OnnxTensor:
        order = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], tuple | list) \
            else axes
        perm = tuple(range(self.ndim))[::-1] if not order else \
            tuple(int(a) % self.ndim for a in order)
        if perm == tuple(range(self.ndim)):
            return self
        return self.graph.node("Transpose", [self], tuple(self.shape[a] for a in perm),
                               self.dtype, perm=list(perm))

    def astype(self, dtype: Any, copy: bool = True) -> OnnxTensor:
        """A Cast, or the tensor itself when it is of `dtype` (a graph's values are never
        written into, so `copy` changes nothing)."""
        return self.graph.cast(self, np.dtype(dtype))

    def __getitem__(self, key: Any) -> OnnxTensor:
        return self.graph.index(self, key)


def _reshaped(shape: tuple[int, ...], wanted: tuple[Any, ...]) -> tuple[int, ...]:
    """numpy's reshape rule: the new shape, one -1 inferred from the size."""
    size = int(np.prod(shape, dtype=np.int64))
    dims = [int(n) for n in wanted]
    if dims.count(-1) == 1:
        known = int(np.prod([n for n in dims if n != -1], dtype=np.int64))
        dims[dims.index(-1)] = size // known if known else 0
    if int(np.prod(dims, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape an array of size {size} into shape {tuple(wanted)}")
    return tuple(dims)


class OnnxGraph:
    """The nodes, initializers, inputs and outputs of one graph, and `xp`, the namespace whose
    functions append to it. `prefix` starts every name it makes, so two graphs merge without
    clashes."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        #: constants made from numpy arrays, by id; the array is kept so its id stays its own
        self._constants: dict[tuple[int, str], tuple[Any, OnnxTensor]] = {}
        self._count = 0
        self.xp = OnnxNamespace(self)

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{self.prefix}{hint}{self._count}"

    def input(self, name: str, shape: Sequence[int], dtype: Any) -> OnnxTensor:
        """A graph input."""
        from onnx import helper

        tensor = OnnxTensor(self, name, tuple(shape), np.dtype(dtype))
        self.inputs.append(helper.make_tensor_value_info(
            name, _onnx_type(tensor.dtype), list(tensor.shape)))
        return tensor

    def model(self, name: str, metadata: dict[str, str]) -> Any:
        """The graph as an `onnx.ModelProto` of `OPSET`, with `metadata` as its metadata."""
        from onnx import helper

        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs,
                                  initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="evo", producer_version=__version__)
        model.ir_version = IR_VERSION
        helper.set_model_props(model, metadata)
        return model

    def output(self, name: str, value: Any) -> None:
        """`value` (a tensor, or an array when it depends on no input) as the output `name`."""
        from onnx import helper

        tensor = self.tensor(value)
        self.nodes.append(helper.make_node("Identity", [tensor.name], [name]))
        self.outputs.append(helper.make_tensor_value_info(
            name, _onnx_type(tensor.dtype), list(tensor.shape)))

    def constant(self, value: Any, dtype: Any = None) -> OnnxTensor:
        """An initializer holding `value` (as `dtype`, if given): one per array and dtype."""
        from onnx import numpy_helper

        wanted = np.dtype(dtype) if dtype is not None else None
        key = (id(value), str(wanted))
        known = self._constants.get(key)
        if known is not None and known[0] is value:
            return known[1]
        array: NDArray[Any] = np.ascontiguousarray(value, dtype=wanted)
        if array.dtype == np.intp and np.dtype(np.intp) != np.int64:
            array = array.astype(np.int64)
        name = self.fresh("const")
        self.initializers.append(numpy_helper.from_array(array, name))
        tensor = OnnxTensor(self, name, array.shape, array.dtype)
        self._constants[key] = (value, tensor)
        return tensor

    def tensor(self, value: Any, dtype: Any = None) -> OnnxTensor:
        """`value` as a tensor of `dtype` (a constant unless it is one; cast if it is not of
        that type)."""
        if isinstance(value, OnnxTensor):
            return value if dtype is None else self.cast(value, np.dtype(dtype))
        return self.constant(value, dtype)

    def node(self, op: str, inputs: Sequence[OnnxTensor], shape: Sequence[int], dtype: Any,
             **attributes: Any) -> OnnxTensor:
        """One node of `op` on `inputs`, its output of `shape` and `dtype`."""
        from onnx import helper

        output = OnnxTensor(self, self.fresh(op.lower()), tuple(shape), np.dtype(dtype))
        self.nodes.append(helper.make_node(op, [t.name for t in inputs], [output.name],
                                           **attributes))
        return output

    def cast(self, tensor: OnnxTensor, dtype: np.dtype[Any]) -> OnnxTensor:
        if tensor.dtype == dtype:
            return tensor
        return self.node("Cast", [tensor], tensor.shape, dtype, to=_onnx_type(dtype))

    def floating(self, value: Any) -> Any:
        """`value` as numpy's float functions take it: integers and booleans as float64."""
        if isinstance(value, OnnxTensor) and value.dtype.kind not in "fc":
            return self.cast(value, np.dtype(np.float64))
        return value

    def unary(self, op: str, value: OnnxTensor) -> OnnxTensor:
        return self.node(op, [value], value.shape, value.dtype)

    def binary(self, op: str, left: Any, right: Any, dtype: Any = None) -> OnnxTensor:
        """`op` of two operands broadcast as numpy broadcasts them, both first brought to the
        type numpy's promotion gives (`dtype` of the result, if another: a comparison's)."""
        common = np.result_type(_dtype_of(left), _dtype_of(right))
        a, b = self.tensor(left, common), self.tensor(right, common)
        shape = np.broadcast_shapes(a.shape, b.shape)
        return self.node(op, [a, b], shape, common if dtype is None else dtype)

    def compare(self, op: str, left: Any, right: Any) -> OnnxTensor:
        return self.binary(op, left, right, np.bool_)

    def logical(self, op: str, left: Any, right: Any) -> OnnxTensor:
        a, b = self.tensor(left, np.bool_), self.tensor(right, np.bool_)
        return self.node(op, [a, b], np.broadcast_shapes(a.shape, b.shape), np.bool_)

    def index(self, tensor: OnnxTensor, key: Any) -> OnnxTensor:
        """numpy's basic indexing (slices with positive steps, integers, None, Ellipsis) and
        one integer array index: a Slice, then a Gather, then a Reshape, each if needed."""
        plan = _IndexPlan.of(tensor.shape, key)
        result = tensor
        if plan.axes:
            result = self.node("Slice", [tensor] + [
                self.constant(np.array(v, dtype=np.int64))
                for v in (plan.starts, plan.ends, plan.axes, plan.steps)],
                plan.sliced, tensor.dtype)
        final = plan.final
        if plan.gather is not None:
            source, positions, place = plan.gather
            gathered = plan.sliced[:source] + list(positions.shape) + plan.sliced[source + 1:]
            result = self.node("Gather", [result, self.constant(positions)], gathered,
                               tensor.dtype, axis=source)
            final = final[:place] + list(positions.shape) + final[place + 1:]
        return result.reshape(tuple(final)) if tuple(final) != result.shape else result


@dataclass
class _IndexPlan:
    """What numpy's indexing of a shape by a key does, as ONNX's Slice (`starts`, `ends`,
    `axes`, `steps`; the shape after it, `sliced`), Gather (of one integer array: the axis it
    takes, the index, and its place in `final`) and Reshape (to `final`, where integers drop
    axes and None adds them)."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    axes: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    sliced: list[int] = field(default_factory=list)
    final: list[int] = field(default_factory=list)
    gather: tuple[int, NDArray[np.int64], int] | None = None

    @classmethod
    def of(cls, shape: tuple[int, ...], key: Any) -> _IndexPlan:
        items = list(key) if isinstance(key, tuple) else [key]
        if any(item is Ellipsis for item in items):
            at = items.index(Ellipsis)
            used = sum(1 for item in items if item is not None and item is not Ellipsis)
            items[at:at + 1] = [slice(None)] * (len(shape) - used)
        plan = cls()
        axis = 0
        for item in items:
            if item is None:
                plan.final.append(1)
                continue
            if axis >= len(shape):
                raise IndexError(f"too many indices for a tensor of shape {shape}")
            plan.take(axis, shape[axis], item)
            axis += 1
        plan.sliced += list(shape[axis:])
        plan.final += list(shape[axis:])
        return plan

    def take(self, axis: int, size: int, item: Any) -> None:
        """Index `axis` (of `size`) with `item`."""
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if step < 1:
                raise OnnxUnsupported("the step slices with a negative step")
            length = len(range(start, stop, step))
            if length != size:
                self._slice(axis, start, start + (length - 1) * step + 1 if length else start,
                            step)
            self.sliced.append(length)
            self.final.append(length)
        elif isinstance(item, int | np.integer):
            position = int(item) + size if int(item) < 0 else int(item)
            if not 0 <= position < size:
                raise IndexError(f"index {int(item)} is out of bounds for size {size}")
            self._slice(axis, position, position + 1, 1)
            self.sliced.append(1)
        elif self.gather is None and np.asarray(item).dtype.kind in "iu":
            self.gather = (axis, np.asarray(item, dtype=np.int64), len(self.final))
            self.sliced.append(size)
            self.final.append(-1)  # replaced by the index's own shape
        else:
            raise OnnxUnsupported(f"the step indexes an array with {type(item).__name__} "
                                  "(slices, integers, None and one integer array are "
                                  "translated)")

    def _slice(self, axis: int, start: int, end: int, step: int) -> None:
        self.starts.append(start)
        self.ends.append(end)
        self.axes.append(axis)
        self.steps.append(step)


class OnnxNamespace:
    """The array namespace `xp` of a graph: numpy's functions that brains call, each appending
    the nodes that compute it when an argument is a tensor, numpy's own otherwise."""

    float64 = np.float64
    float32 = np.float32
    int64 = np.int64
    pi = np.pi

    def __init__(self, graph: OnnxGraph) -> None:
        self.graph = graph

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise OnnxUnsupported(f"the step calls xp.{name}, which evo's ONNX export does not "
                              "translate")

    @staticmethod
    def _numeric(*values: Any) -> bool:
        return not any(isinstance(value, OnnxTensor) for value in values)

    def _unary(self, op: str, fallback: Any, x: Any) -> Any:
        if self._numeric(x):
            return fallback(x)
        return self.graph.unary(op, self.graph.floating(x))

    def tanh(self, x: Any) -> Any:
        return self._unary("Tanh", np.tanh, x)

    def exp(self, x: Any) -> Any:
        return self._unary("Exp", np.exp, x)

    def sin(self, x: Any) -> Any:
        return self._unary("Sin", np.sin, x)

    def cos(self, x: Any) -> Any:
        return self._unary("Cos", np.cos, x)

    def sqrt(self, x: Any) -> Any:
        return self._unary("Sqrt", np.sqrt, x)

    def abs(self, x: Any) -> Any:
        if self._numeric(x):
            return np.abs(x)
        return self.graph.unary("Abs", x)

    def negative(self, x: Any) -> Any:
        return -x

    def add(self, a: Any, b: Any) -> Any:
        return np.add(a, b) if self._numeric(a, b) else self.graph.binary("Add", a, b)

    def subtract(self, a: Any, b: Any) -> Any:
        return np.subtract(a, b) if self._numeric(a, b) else self.graph.binary("Sub", a, b)

    def multiply(self, a: Any, b: Any) -> Any:
        return np.multiply(a, b) if self._numeric(a, b) else self.graph.binary("Mul", a, b)

    def divide(self, a: Any, b: Any) -> Any:
        if self._numeric(a, b):
            return np.divide(a, b)
        return self.graph.binary("Div", self.graph.floating(a), self.graph.floating(b))

    def maximum(self, a: Any, b: Any) -> Any:
        return np.maximum(a, b) if self._numeric(a, b) else self.graph.binary("Max", a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        return np.minimum(a, b) if self._numeric(a, b) else self.graph.binary("Min", a, b)

    def clip(self, x: Any, low: Any, high: Any) -> Any:
        """numpy's clip: the maximum with `low`, then the minimum with `high`."""
        return self.minimum(self.maximum(x, low), high)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        if self._numeric(condition, a, b):
            return np.where(condition, a, b)
        graph = self.graph
        common = np.result_type(_dtype_of(a), _dtype_of(b))
        tensors = [graph.tensor(condition, np.bool_), graph.tensor(a, common),
                   graph.tensor(b, common)]
        return graph.node("Where", tensors, np.broadcast_shapes(*(t.shape for t in tensors)),
                          common)

    def asarray(self, x: Any, dtype: Any = None) -> Any:
        if self._numeric(x):
            return np.asarray(x, dtype=dtype)
        return x if dtype is None else self.graph.cast(x, np.dtype(dtype))

    def reshape(self, x: Any, shape: Any) -> Any:
        return np.reshape(x, shape) if self._numeric(x) else x.reshape(shape)

    def transpose(self, x: Any, axes: Any = None) -> Any:
        if self._numeric(x):
            return np.transpose(x, axes)
        return x.transpose() if axes is None else x.transpose(axes)

    def swapaxes(self, x: Any, first: int, second: int) -> Any:
        if self._numeric(x):
            return np.swapaxes(x, first, second)
        order = list(range(x.ndim))
        order[first], order[second] = order[second], order[first]
        return x.transpose(order)

    def concatenate(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        if self._numeric(*arrays):
            return np.concatenate(arrays, axis=axis)
        graph = self.graph
        common = np.result_type(*(_dtype_of(a) for a in arrays))
        tensors = [graph.tensor(a, common) for a in arrays]
        position = axis % tensors[0].ndim
        shape = list(tensors[0].shape)
        shape[position] = builtins.sum(t.shape[position] for t in tensors)
        return graph.node("Concat", tensors, shape, common, axis=position)

    def take(self, x: Any, indices: Any, axis: int) -> Any:
        if self._numeric(x, indices):
            return np.take(x, indices, axis=axis)
        graph = self.graph
        index = graph.tensor(indices, np.int64)
        position = axis % x.ndim
        shape = x.shape[:position] + index.shape + x.shape[position + 1:]
        return graph.node("Gather", [graph.tensor(x), index], shape, x.dtype, axis=position)

    def matmul(self, a: Any, b: Any) -> Any:
        """numpy's matmul of arrays of at least two axes (stacks broadcast)."""
        if self._numeric(a, b):
            return np.matmul(a, b)
        graph = self.graph
        common = np.result_type(_dtype_of(a), _dtype_of(b))
        left, right = graph.tensor(a, common), graph.tensor(b, common)
        if left.ndim < 2 or right.ndim < 2 or left.shape[-1] != right.shape[-2]:
            raise OnnxUnsupported(f"matmul of shapes {left.shape} and {right.shape} (stacks of "
                                  "matrices are translated)")
        stack = np.broadcast_shapes(left.shape[:-2], right.shape[:-2])
        return graph.node("MatMul", [left, right],
                          (*stack, left.shape[-2], right.shape[-1]), common)

    def matvec(self, weights: Any, x: Any) -> Any:
        """`weights[i] @ x[i]` for every row (`rows_matvec`): a matmul with x as columns."""
        if self._numeric(weights, x):
            return np.matvec(weights, x)
        columns = self.matmul(weights, x.reshape(*x.shape, 1))
        return columns.reshape(columns.shape[:-1])

    def argmax(self, x: Any, axis: int) -> Any:
        if self._numeric(x):
            return np.argmax(x, axis=axis)
        position = axis % x.ndim
        shape = x.shape[:position] + x.shape[position + 1:]
        return self.graph.node("ArgMax", [x], shape, np.int64, axis=position, keepdims=0,
                               select_last_index=0)
