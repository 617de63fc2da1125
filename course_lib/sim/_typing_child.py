"""The typing process of :mod:`course_lib.sim._typing`: numba-cuda's compiler with the real CUDA target.

Started by the simulator as ``python -m course_lib.sim._typing_child`` with the simulator
off; it reads pickled requests (a kernel and its argument types) on its input and answers
each with a :class:`~course_lib.sim._typing.KernelTyping` (typing and LLVM lowering only:
no NVVM, no GPU).
"""

from __future__ import annotations

import operator
import pickle
import re
import struct
import sys

from ._typing import KernelTyping, _warm_up

_OPERATOR_NAMES = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
    operator.floordiv: "floordiv", operator.mod: "mod", operator.pow: "pow", operator.lshift: "lshift",
    operator.rshift: "rshift", operator.and_: "and_", operator.or_: "or_", operator.xor: "xor",
    operator.iadd: "add", operator.isub: "sub", operator.imul: "mul", operator.itruediv: "truediv",
    operator.ifloordiv: "floordiv", operator.imod: "mod", operator.ipow: "pow", operator.ilshift: "lshift",
    operator.irshift: "rshift", operator.iand: "and_", operator.ior: "or_", operator.ixor: "xor",
    operator.neg: "neg", operator.pos: "pos", operator.invert: "invert",
}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|", "xor": "^", "neg": "-", "pos": "+",
           "invert": "~"}


_LLVM_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "float": 4, "double": 8,
               "{float, float}": 8, "{double, double}": 16}
_SHARED_GLOBAL = re.compile(r"^@\S+ = (?:internal )?addrspace\(3\) global \[(\d+) x ([^\]]+)\]", re.M)


def _shared_bytes(library, seen=None):
    """Bytes of the static shared arrays (``addrspace(3)`` globals, not ``external``: those are the
    dynamic ones) of a numba code library and the libraries it links (device functions)."""
    seen = set() if seen is None else seen
    if id(library) in seen:
        return 0
    seen.add(id(library))
    try:
        text = library.get_llvm_str()
    except Exception:
        return 0
    total = sum(int(count) * _LLVM_BYTES.get(element.strip(), 0) for count, element in _SHARED_GLOBAL.findall(text))
    for linked in getattr(library, "_linking_libraries", ()) or ():
        total += _shared_bytes(linked, seen)
    return total


#: numba-cuda's bit intrinsics whose width follows the argument's numba type (course_lib.sim._intrinsics).
_BIT_INTRINSICS = frozenset({"clz", "popc", "ffs"})
_VERSION = re.compile(r"\.\d+$")


def _unified(copies, defined_at, typemap, ir):
    """``(line, variable) -> numba type`` of the assignments whose value numba-cuda converts where paths merge.

    numba-cuda types each SSA version of a variable and unifies the versions that meet at a merge (a
    phi node): ``v = 1`` on one path and ``v = 1.5`` on the other make the merged ``v`` a float64, and
    lowering turns the phi into copies that convert (``v.2 = v``, float64 from Literal[int](1)) at the
    end of each incoming path. The simulator converts the value where the incoming version is assigned
    (its line, its variable) to the merged type; a use of the narrower value between that assignment and
    the merge on the same path is the one case where this differs.
    """
    from numba.core import types

    out = {}
    for stmt in copies:
        target, source = stmt.target.name, stmt.value.name
        base = _VERSION.sub("", target)
        if base.startswith(("$", "arg.")) or _VERSION.sub("", source) != base:
            continue
        to, frm = types.unliteral(typemap.get(target)), types.unliteral(typemap.get(source))
        if to == frm or not all(isinstance(t, (types.Integer, types.Float, types.Boolean, types.Complex))
                                for t in (to, frm)):
            continue
        origin = defined_at.get(source)
        if origin is None or isinstance(origin.value, ir.Arg):
            continue  # an argument: no assignment of the kernel's source to convert
        key = (origin.loc.line, base)
        out[key] = to if out.get(key, to) == to else None  # two merged types for one assignment: not converted
    return {k: v for k, v in out.items() if v is not None}


def _analyse(cres, argtypes):
    """A :class:`KernelTyping` from numba's compile result (child side)."""
    from numba.core import types

    try:  # numba-cuda keeps its own copy of numba's IR
        from numba.cuda.core import ir
    except ImportError:  # pragma: no cover
        from numba.core import ir

    typemap, calltypes = cres.fndesc.typemap, cres.fndesc.calltypes
    out = KernelTyping()
    out.array_dtypes = tuple(str(t.dtype) for t in argtypes if isinstance(t, types.Array))
    out.shared_bytes = _shared_bytes(cres.library)

    def operand_types(names):
        return tuple(types.unliteral(typemap[n]) for n in names)

    # Operations on constants only (-math.inf, 2.0 * math.pi) are folded by the compiler: no instruction.
    definition = {}
    defined_at = {}
    annotation = getattr(cres, "type_annotation", None)
    copies = []
    for block in (getattr(annotation, "blocks", None) or {}).values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                definition.setdefault(stmt.target.name, stmt.value)
                defined_at.setdefault(stmt.target.name, stmt)
                if isinstance(stmt.value, ir.Var):
                    copies.append(stmt)
    out.unified = _unified(copies, defined_at, typemap, ir)

    def constant(name, depth=0):
        value = definition.get(name)
        if depth > 8 or value is None:
            return False
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
            return True
        if isinstance(value, ir.Var):
            return constant(value.name, depth + 1)
        if isinstance(value, ir.Expr):
            if value.op == "getattr":
                return constant(value.value.name, depth + 1)
            if value.op in ("binop", "inplace_binop"):
                return constant(value.lhs.name, depth + 1) and constant(value.rhs.name, depth + 1)
            if value.op == "unary":
                return constant(value.value.name, depth + 1)
        return False

    for inst, sig in calltypes.items():
        if not isinstance(inst, ir.Expr) or sig is None:
            continue
        name, operands = None, None
        if inst.op in ("binop", "inplace_binop"):
            name = _OPERATOR_NAMES.get(inst.fn)
            operands = (inst.lhs.name, inst.rhs.name)
        elif inst.op == "unary":
            name = _OPERATOR_NAMES.get(inst.fn)
            operands = (inst.value.name,)
        elif inst.op == "call":
            key = getattr(typemap.get(inst.func.name), "typing_key", None)  # math.sqrt itself, for math calls
            if getattr(key, "__name__", None) in _BIT_INTRINSICS and len(sig.args) == 1 \
                    and "cuda" in getattr(key, "__module__", ""):
                where = (inst.loc.line, key.__name__)
                argtype = sig.args[0]
                # Two calls of one intrinsic on a line with different types: the line cannot tell them apart.
                out.intrinsic_args[where] = argtype if out.intrinsic_args.get(where, argtype) == argtype else None
            if getattr(key, "__module__", None) == "math" and not inst.kws:
                name = "math." + key.__name__
                operands = tuple(v.name for v in inst.args)
        if name is None or any(n not in typemap for n in operands):
            continue
        given = operand_types(operands)
        result = sig.return_type
        out.ops.setdefault((name, given), (tuple(sig.args), result))
        if all(constant(n) for n in operands):
            continue
        kinds = [t for t in (*sig.args, result) if isinstance(t, types.Float)]
        if not kinds:
            continue
        line = inst.loc.line
        counts = out.float_lines.setdefault(line, {"float64": 0, "float32": 0})
        width = max(t.bitwidth for t in kinds)
        if width == 64:
            counts["float64"] += 1
            sym = _SYMBOL.get(name)
            if sym is None:
                what = f"{name}({', '.join(map(str, given))}) -> {result}"
            elif len(given) == 1:
                what = f"{sym}{given[0]} -> {result}"
            else:
                what = f"{given[0]} {sym} {given[1]} -> {result}"
            out.float64_details.setdefault(line, []).append(what)
        elif width == 32:
            counts["float32"] += 1
    return out


#: Errors of the machine, not of the kernel: a driver, NVVM or NVRTC that cannot be loaded (ImportError
#: subclasses in numba-cuda: CudaSupportError, NvvmSupportError, NvrtcSupportError), a file missing.
_ENVIRONMENT_ERRORS = (ImportError, OSError)


class _TypingDevice:
    """What numba-cuda's compiler asks of "the current device" while it types: its compute capability.

    Overloads of NumPy functions (``np.zeros``) and device functions called by a kernel are compiled for
    ``get_current_device().compute_capability``, which needs a driver; the kernel itself is typed for
    cc 8.0 here, and so are they. Without this, such kernels failed with "CUDA driver library cannot be
    found" and were run untyped, although numba-cuda refuses some of them (``np.zeros`` in a kernel:
    "No implementation of function Function(<built-in function zeros>)").
    """

    compute_capability = (8, 0)

    def __getattr__(self, name):
        # Anything else needs a real device: the kernel counts as untypable (an ImportError, as numba-cuda's
        # CudaSupportError), never as refused.
        raise ImportError(f"the typing process has no GPU to answer get_current_device().{name}")


def _without_driver():
    """Answer numba-cuda's ``get_current_device()`` with :class:`_TypingDevice` in this process (the typing
    process has no GPU, and lowers for cc 8.0 only)."""
    import sys as _sys

    for name in ("numba.cuda.dispatcher", "numba.cuda.compiler", "numba.cuda.memory_management.nrt"):
        module = _sys.modules.get(name)
        if module is None:
            try:
                module = __import__(name, fromlist=["_"])
            except Exception:
                continue
        if hasattr(module, "get_current_device"):
            module.get_current_device = _TypingDevice


def _serve():  # pragma: no cover - runs in the child
    from course_lib import device

    device.configure(force="gpu")
    try:
        from numba.core import errors, types
        from numba.cuda.compiler import compile_cuda
    except Exception:
        compile_cuda = None
    from ._transport import _lookup

    if compile_cuda is not None:
        _without_driver()
        try:  # warm numba's typing and lowering up while the parent gets on with its work
            from numba.core import types

            compile_cuda(_warm_up, types.void, (types.float32[::1],), cc=(8, 0))
        except Exception:
            pass
    inp, outp = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = inp.read(8)
        if len(head) != 8:
            return
        (size,) = struct.unpack("<Q", head)
        try:
            request = pickle.loads(inp.read(size))
            kind, target = request["target"]
            if compile_cuda is not None:  # the launching process's NRT setting (np.empty, array.copy need it)
                from numba.cuda import config as cuda_config

                cuda_config.CUDA_ENABLE_NRT = bool(request.get("nrt", False))
            kernel = _lookup(*target) if kind == "name" else target
            py_func = getattr(kernel, "py_func", kernel)
            if compile_cuda is None:
                reply = {"unavailable": "numba-cuda's compiler cannot be loaded"}
            else:
                try:
                    # A kernel is compiled for a void return, as numba-cuda's _Kernel compiles it (a kernel
                    # returning a value fails: "No conversion from Literal[int](5) to none").
                    cres = compile_cuda(py_func, types.void, request["argtypes"], debug=request["debug"], cc=(8, 0))
                    reply = {"typing": _analyse(cres, request["argtypes"])}
                except _ENVIRONMENT_ERRORS as err:  # needs a driver or a library this machine lacks
                    reply = {"typing": KernelTyping(untypable=f"{type(err).__name__}: {str(err).strip()}")}
                except (errors.NumbaError, NotImplementedError, TypeError) as err:  # numba-cuda refuses the kernel
                    text = str(err).strip()
                    if not isinstance(err, errors.NumbaError):  # "No definition for lowering ...", a type check
                        text = f"{type(err).__name__}: {text}"
                    reply = {"typing": KernelTyping(error=text)}
                except Exception as err:  # an internal error of compiling outside numba-cuda's dispatcher
                    # (recursive device functions: "'JITCUDACodegen' object has no attribute
                    # 'insert_unresolved_ref'"), which a GPU launch does not meet: not a refusal.
                    reply = {"typing": KernelTyping(untypable=f"{type(err).__name__}: {str(err).strip()}")}
        except Exception as err:  # anything else: the parent runs without static typing
            reply = {"unavailable": f"{type(err).__name__}: {err}"}
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        outp.write(struct.pack("<Q", len(data)) + data)
        outp.flush()


if __name__ == "__main__":
    # Under ``python -m`` this module is __main__: serve with the importable one.
    from course_lib.sim._typing_child import _serve as serve

    serve()
