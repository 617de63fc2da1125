"""The machine code (SASS) a kernel becomes, and its inner loop's instruction mix, with no GPU.

A kernel is compiled to PTX by numba-cuda (NVVM, in a child process where the simulator is off,
see :func:`course_lib.compile_check.compile_kernel`), assembled by ``ptxas -O3`` from the
``nvidia-cuda-nvcc`` wheel and disassembled by ``nvdisasm`` from the ``nvidia-cuda-nvdisasm`` wheel
(both in the ``cu13`` / ``cu12`` extras). ``ptxas -O3`` gives the same inner loop as the cubin that
numba-cuda links for a launch.

>>> from course_lib.nbody.kernels import nbody_tiled_kernel, BODY_SIG
>>> mix = instruction_mix(nbody_tiled_kernel(256), BODY_SIG, per=4)  # doctest: +SKIP
>>> mix.slots_per_unit  # doctest: +SKIP
27.75

On Hopper (sm_90) a scheduler issues one warp instruction per clock and its FP32 pipe is as wide
as the issue rate, so every instruction of the loop, integer and control included, takes the slot
of an FP32 instruction: issue slots per unit of work, not flops, bound a compute kernel there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CLASSES",
    "Instruction",
    "InstructionMix",
    "Loop",
    "SassToolsMissing",
    "assemble",
    "classify",
    "find_tool",
    "innermost_loops",
    "instruction_mix",
    "mix_of",
    "parse_sass",
    "sass",
    "sass_of_ptx",
]

#: Instruction classes of :class:`InstructionMix`, in the order they are printed.
CLASSES = ("FP32", "FP64", "integer", "control", "MUFU", "shared", "global", "other")

_FP32 = {"FADD", "FADD32I", "FMUL", "FMUL32I", "FFMA", "FFMA32I", "FMNMX", "FSET", "FSETP", "FSEL", "FCHK",
         "FSWZADD", "FCMP"}
_FP64 = {"DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "DSET"}
_INTEGER = {"IADD3", "IADD", "IADD32I", "IMAD", "IMUL", "LEA", "LOP3", "LOP", "LOP32I", "SHF", "SHL", "SHR",
            "ISETP", "IMNMX", "SEL", "IABS", "POPC", "FLO", "BREV", "PRMT", "IDP", "VIADD", "VIMNMX", "ISCADD",
            "BMSK", "SGXT", "PLOP3", "P2R", "R2P", "IDP4A", "IADD3X", "ICMP"}
_CONTROL = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BAR", "BPT",
            "YIELD", "KILL", "BREAK", "CONT", "SYNC", "SSY", "PBK", "PCNT", "ACQBULK", "ELECT", "VOTE", "VOTEU",
            "NANOSLEEP", "MEMBAR", "ERRBAR", "CCTL", "DEPBAR"}
_SHARED = {"LDS", "STS", "LDSM", "ATOMS", "STSM"}
_GLOBAL = {"LDG", "STG", "ATOMG", "ATOM", "RED", "REDG", "LD", "ST", "LDGSTS", "LDGDEPBAR"}


class SassToolsMissing(RuntimeError):
    """``ptxas`` or ``nvdisasm`` is not installed (they come with the ``cu13`` or ``cu12`` extra)."""


def classify(opcode: str) -> str:
    """Class of one SASS opcode, one of :data:`CLASSES`.

    Parameters
    ----------
    opcode : str
        With or without modifiers, e.g. ``"FFMA"``, ``"LDS.128"``, ``"ISETP.GE.U32.AND"``.

    Returns
    -------
    str
    """
    base = opcode.split(".")[0]
    if base in _FP32:
        return "FP32"
    if base in _FP64:
        return "FP64"
    if base == "MUFU":
        return "MUFU"
    if base in _INTEGER:
        return "integer"
    if base in _CONTROL:
        return "control"
    if base in _SHARED:
        return "shared"
    if base in _GLOBAL:
        return "global"
    return "other"


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: byte address, opcode with modifiers, and the whole line."""

    address: int
    opcode: str
    text: str
    #: Label a branch jumps to (``.L_x_3``), else None.
    target: str | None = None


@dataclass(frozen=True)
class Loop:
    """A loop of the SASS: the instructions from a label to the branch that jumps back to it."""

    start: int
    end: int
    instructions: tuple

    @property
    def size(self) -> int:
        """Instructions in one trip (the back branch included)."""
        return len(self.instructions)


_LINE = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<body>.*?)\s*;?\s*$")
_LABEL = re.compile(r"^\s*(?P<label>\.L_\w+):\s*$")
_TARGET = re.compile(r"`\((?P<label>\.L_\w+)\)")


def parse_sass(text: str) -> tuple[list[Instruction], dict[str, int]]:
    """Instructions and label addresses of ``nvdisasm`` output.

    Parameters
    ----------
    text : str
        What ``nvdisasm -c`` prints for one kernel.

    Returns
    -------
    (list of Instruction, dict label -> address of the instruction that follows it)
    """
    instructions, labels, pending = [], {}, []
    for line in text.splitlines():
        label = _LABEL.match(line)
        if label:
            pending.append(label["label"])
            continue
        found = _LINE.match(line)
        if not found:
            continue
        body = found["body"].rstrip(" ;")
        words = body.split()
        if words and words[0].startswith("@"):  # a guard predicate, @P0 / @!P1
            words = words[1:]
        if not words:
            continue
        address = int(found["addr"], 16)
        for name in pending:
            labels[name] = address
        pending = []
        target = _TARGET.search(body)
        instructions.append(Instruction(address, words[0], body, target["label"] if target else None))
    return instructions, labels


def innermost_loops(instructions, labels) -> list[Loop]:
    """Loops that contain no other loop, largest first.

    A loop is a branch back to a label at or before it; the spin ``BRA`` that ends every kernel
    (a one-instruction loop on itself) is left out.

    Parameters
    ----------
    instructions : list of Instruction
    labels : dict
        From :func:`parse_sass`.

    Returns
    -------
    list of Loop
    """
    spans = []
    for ins in instructions:
        if ins.target is None or ins.opcode.split(".")[0] not in {"BRA", "JMP"}:
            continue
        start = labels.get(ins.target)
        if start is not None and start < ins.address:
            spans.append((start, ins.address))
    inner = [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]
    loops = [Loop(a, b, tuple(i for i in instructions if a <= i.address <= b)) for a, b in set(inner)]
    return sorted(loops, key=lambda lp: (-lp.size, lp.start))


@dataclass
class InstructionMix:
    """Instruction classes of one loop of a kernel's SASS, and issue slots per unit of work.

    Attributes
    ----------
    counts : dict
        Class (one of :data:`CLASSES`) -> instructions in one trip of the loop.
    opcodes : collections.Counter
        Opcode (without modifiers) -> instructions in one trip.
    slots : int
        Issue slots of one trip: every instruction takes one, whatever its class.
    per : float
        Units of work (interactions, non-zeros, pixel-sweeps) one trip does.
    arch : str
    loop : Loop
    loops : list of Loop
        Every innermost loop of the kernel, largest first (``loop`` is one of them).
    """

    counts: dict
    opcodes: Counter
    slots: int
    per: float
    arch: str
    loop: Loop
    loops: list = field(default_factory=list)

    @property
    def slots_per_unit(self) -> float:
        """Issue slots per unit of work."""
        return self.slots / self.per

    def per_unit(self) -> dict:
        """Instructions of each class per unit of work."""
        return {name: count / self.per for name, count in self.counts.items()}

    def table(self) -> str:
        """The mix as a small text table (per trip and per unit of work)."""
        rows = [f"{'class':<8} {'per trip':>8} {'per unit':>9}"]
        rows += [f"{name:<8} {self.counts[name]:>8} {self.counts[name] / self.per:>9.2f}" for name in CLASSES]
        rows.append(f"{'slots':<8} {self.slots:>8} {self.slots_per_unit:>9.2f}")
        return "\n".join(rows)

    def __str__(self):
        return (f"{self.arch} loop at 0x{self.loop.start:04x}-0x{self.loop.end:04x}, {self.per:g} units per trip\n"
                + self.table())


def mix_of(text: str, *, per: float = 1, arch: str = "sm_90", loop: int = 0) -> InstructionMix:
    """Instruction mix of one innermost loop of disassembled SASS.

    Parameters
    ----------
    text : str
        ``nvdisasm`` output (see :func:`sass`).
    per : float
        Units of work one trip of the loop does (e.g. 4 interactions when the compiler unrolled
        the source loop four times: read it off the loop's instructions).
    arch : str
        Only recorded in the result.
    loop : int
        Which innermost loop, 0 being the one with the most instructions.

    Returns
    -------
    InstructionMix

    Raises
    ------
    ValueError
        If the code has no loop, or ``per`` is not positive.
    """
    if not per > 0:
        raise ValueError(f"per must be positive, got {per}")
    instructions, labels = parse_sass(text)
    loops = innermost_loops(instructions, labels)
    if not loops:
        raise ValueError("the SASS has no loop (a branch back to an earlier label)")
    if not 0 <= loop < len(loops):
        raise ValueError(f"loop must be in 0..{len(loops) - 1}, got {loop}")
    chosen = loops[loop]
    counts = dict.fromkeys(CLASSES, 0)
    opcodes = Counter()
    for ins in chosen.instructions:
        counts[classify(ins.opcode)] += 1
        opcodes[ins.opcode.split(".")[0]] += 1
    return InstructionMix(counts, opcodes, chosen.size, per, arch, chosen, loops)


# --- the toolchain ------------------------------------------------------------------------------

# Where the wheels put their programs: nvidia/cu13/bin (CUDA 13 wheels), nvidia/cuda_nvcc/bin and
# nvidia/cuda_nvdisasm/bin (CUDA 12 wheels).
_WHEEL_DIRS = ("cu13/bin", "cuda_nvcc/bin", "cuda_nvdisasm/bin")
_WHEEL_OF = {"ptxas": "nvidia-cuda-nvcc", "nvdisasm": "nvidia-cuda-nvdisasm"}


def _wheel_bins():
    try:
        import nvidia
    except ImportError:
        return []
    return [Path(root) / sub for root in getattr(nvidia, "__path__", []) for sub in _WHEEL_DIRS]


def find_tool(name: str) -> str:
    """Path of ``ptxas`` or ``nvdisasm``: from NVIDIA's wheels first, then ``PATH``.

    Raises
    ------
    SassToolsMissing
        With the install command, if neither has it.
    """
    exe = name + (".exe" if sys.platform == "win32" else "")
    for folder in _wheel_bins():
        candidate = folder / exe
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise SassToolsMissing(
        f"{name} was not found: it ships in the {_WHEEL_OF.get(name, name)} wheel. Install the toolkit extra, "
        "e.g. pip install -c requirements/lock.txt -e \".[cu13]\" (or \".[cu12]\" for a CUDA 12 driver)")


_UNSUPPORTED = re.compile(r"Unsupported \.version (\d+\.\d+); current version is '(\d+\.\d+)'")


def assemble(ptx: str, arch: str = "sm_90") -> bytes:
    """Assemble PTX into a cubin with ``ptxas -O3``.

    Parameters
    ----------
    ptx : str
    arch : str
        ``"sm_90"``, ``"sm_80"``, ...

    Returns
    -------
    bytes
        The cubin.

    Raises
    ------
    SassToolsMissing
        Without ``ptxas``.
    RuntimeError
        If ``ptxas`` rejects the PTX (its message is included).
    """
    ptxas = find_tool("ptxas")
    with tempfile.TemporaryDirectory(prefix="course-sass-") as tmp:
        source, cubin = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        for _ in range(2):
            source.write_text(ptx)
            proc = subprocess.run([ptxas, f"-arch={arch}", "-O3", str(source), "-o", str(cubin)],
                                  capture_output=True, text=True)
            older = _UNSUPPORTED.search(proc.stderr)
            if proc.returncode == 0 or older is None:
                break
            # An older ptxas (CUDA 12 wheels) than the NVVM that wrote the PTX: the PTX numba emits
            # uses nothing newer, so the version line alone is lowered.
            ptx = re.sub(r"^\.version \S+", f".version {older[2]}", ptx, count=1, flags=re.M)
        if proc.returncode != 0:
            raise RuntimeError(f"ptxas -arch={arch} failed:\n{proc.stderr[-3000:]}")
        return cubin.read_bytes()


def _disassemble(cubin: bytes) -> str:
    nvdisasm = find_tool("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="course-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([nvdisasm, "-c", str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvdisasm failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def sass_of_ptx(ptx: str, arch: str = "sm_90") -> str:
    """SASS of PTX text: ``ptxas -O3`` then ``nvdisasm``.

    Returns
    -------
    str
        The disassembly, one instruction a line (``/*addr*/ OPCODE operands ;``) with branch labels.
    """
    return _disassemble(assemble(ptx, arch))


def _signature(argtypes) -> str:
    if isinstance(argtypes, str):
        text = argtypes.strip()
        return text if text.startswith(("void(", "(")) else f"void({text})"
    return "void(" + ", ".join(str(t) for t in argtypes) + ")"


def _arch_cc(arch: str) -> tuple[int, int]:
    found = re.fullmatch(r"sm_(\d+)(\d)a?", arch)
    if not found:
        raise ValueError(f"arch must look like 'sm_90' or 'sm_80', got {arch!r}")
    return int(found[1]), int(found[2])


def _fastmath_of(kernel) -> bool:
    options = getattr(kernel, "targetoptions", None)
    if isinstance(options, dict):
        return bool(options.get("fastmath", False))
    return bool(getattr(kernel, "_fastmath", False))


_CACHE: dict = {}


def sass(kernel, argtypes, arch: str = "sm_90", *, fastmath: bool | None = None) -> str:
    """The SASS ``kernel`` compiles to for ``arch``, with no GPU.

    Parameters
    ----------
    kernel : @cuda.jit kernel or its Python function
        A course kernel or one written in a notebook cell (sent to the compiler by value).
    argtypes : str or sequence
        Numba signature, ``"void(float32[:, ::1], float32, float32[:, ::1])"``, or its argument
        types, ``("float32[:, ::1]", "float32", "float32[:, ::1]")``.
    arch : str
        ``"sm_90"`` (H100/H200), ``"sm_80"`` (A100), ...
    fastmath : bool or None
        None: as the kernel was jitted (``cuda.jit(fastmath=...)``).

    Returns
    -------
    str
        ``nvdisasm`` output.

    Raises
    ------
    SassToolsMissing
        Without the ``ptxas`` / ``nvdisasm`` wheels (checked before compiling).
    RuntimeError
        If compiling fails.
    """
    from .compile_check import compile_kernel
    from .sim._instrument import py_function

    find_tool("ptxas"), find_tool("nvdisasm")
    fn = py_function(kernel)
    signature = _signature(argtypes)
    fast = _fastmath_of(kernel) if fastmath is None else bool(fastmath)
    # The function object itself is part of the key: a cell that redefines a kernel recompiles.
    key = (fn, fn.__code__, signature, arch, fast)
    if key not in _CACHE:
        ptx = compile_kernel(kernel, signature, cc=_arch_cc(arch), fastmath=fast).ptx
        _CACHE[key] = sass_of_ptx(ptx, arch)
    return _CACHE[key]


def instruction_mix(kernel, argtypes, arch: str = "sm_90", per: float = 1, *, loop: int = 0,
                    fastmath: bool | None = None) -> InstructionMix:
    """Instruction classes of ``kernel``'s innermost loop and its issue slots per unit of work.

    Parameters
    ----------
    kernel, argtypes, arch, fastmath
        As for :func:`sass`.
    per : float
        Units of work one trip of the loop does: the source loop's work times the compiler's
        unroll factor (the nbody tile loop, unrolled four times: ``per=4`` interactions).
    loop : int
        Which innermost loop, 0 being the one with the most instructions.

    Returns
    -------
    InstructionMix
        ``counts`` by class (FP32, FP64, integer, control, MUFU, shared, global, other),
        ``slots`` per trip and ``slots_per_unit``.
    """
    return mix_of(sass(kernel, argtypes, arch, fastmath=fastmath), per=per, arch=arch, loop=loop)
