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
