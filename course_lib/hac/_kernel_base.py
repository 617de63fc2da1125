"""What the kernels of Unit 5 share: the lesson, the sentinels, the tie rule of the argmax.

Read by :mod:`course_lib.hac._argmax` (matching), :mod:`course_lib.hac._fusion` (fusion) and
:mod:`course_lib.hac.kernels` (the other stages, and the unit's kernels in one namespace).
"""

from __future__ import annotations

from numba import cuda

from ..registry import register_kernel

LESSON = "lessons/05_hac.ipynb"
#: Index that loses every tie: the starting "best" of a reduction, the empty slot of ``first``.
INDEX_SENTINEL = 2**31 - 1
#: Key above every real key (they are (l << 32) | e with l, e < 2**31): padding of the sort.
KEY_SENTINEL = 2**63 - 1
#: Block size registered for the compile check of the kernels made by factories.
REGISTERED_BLOCK = 256


@cuda.jit(device=True, inline=True)
def better(value, index, best_value, best_index):
    """True if (value, index) beats (best_value, best_index): a larger value, or the same and a lower index."""
    return value > best_value or (value == best_value and index < best_index)


#: The parameter and the kind of result of the kernel factories whose blocks reduce pairs in shared memory,
#: documented once (:func:`course_lib._docs.fill_doc`); each factory describes its launch below it.
BLOCK_FACTORY_DOC = """
Parameters
----------
block : int
    Threads per block, a power of two (the shared scratch holds ``block`` pairs).

Returns
-------
numba.cuda kernel
"""


def jit_for_block(kernel, block):
    """``cuda.jit(kernel)`` named ``<name>_<block>``: a factory's kernels for two block sizes are told apart in
    profiles and compile reports."""
    kernel.__name__ = f"{kernel.__name__}_{block}"
    return cuda.jit(kernel)


def _check_power_of_two(block):
    if isinstance(block, bool) or int(block) != block or not 1 <= block <= 1024 or block & (block - 1):
        raise ValueError(f"block must be a power of two between 1 and 1024 (threads per block), got {block!r}")
    return int(block)


def register_factory(name, factory, signature, example_block, example, example_at_registered=False):
    """Register a kernel made by ``factory(block)`` for the compile check, twice: at
    :data:`REGISTERED_BLOCK`, and at ``example_block``, the block its ``example`` launches with."""
    register_kernel(f"hac.{name}[block={REGISTERED_BLOCK}]", signature, lambda: factory(REGISTERED_BLOCK).py_func,
                    LESSON, example=example if example_at_registered else None)
    register_kernel(f"hac.{name}[block={example_block}]", signature, lambda: factory(example_block).py_func, LESSON,
                    example=example)
