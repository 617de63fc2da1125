"""The grader's answer keys of ps1 (``course_lib/nbody/questions.py`` judges with them): read by
``course_lib.grading.resources.answer_key`` in the grader's process, never importable from the library."""

def predicted_bytes(n, tile, q):
    """The model: every block (ceil(N q / P) of them) loads the N sources (16 bytes each); each of a body's q
    threads loads its destination (12 bytes)."""
    return 16 * n * -(-n * q // tile) + 12 * n * q


def split_warps(n, tile, q, sm_count, max_threads_per_sm):
    """(SMs busy, mean resident warps on each busy SM) of the split launch: ceil(N q / P) blocks of P threads,
    as many resident on an SM as its threads allow (lesson 1, cell 35)."""
    blocks = -(-n * q // tile)
    warps_per_block = -(-tile // 32)
    resident = max_threads_per_sm // (32 * warps_per_block)
    busy = min(blocks, sm_count)
    running = min(blocks, sm_count * resident)
    return busy, (running * warps_per_block / busy if busy else 0.0)


def split_rule(n, tile, sm_count, max_threads_per_sm, warps_wanted):
    """The grader's rule: the smallest power of two q (1 to 32, dividing P) whose launch keeps every SM busy with
    at least ``warps_wanted`` resident warps; if none does, the smallest q reaching the most (busy SMs, warps per
    busy SM) of any allowed q."""
    splits = [1 << k for k in range(6) if (1 << k) <= tile and tile % (1 << k) == 0]
    reach = {q: split_warps(n, tile, q, sm_count, max_threads_per_sm) for q in splits}
    for q in splits:
        busy, warps = reach[q]
        if busy == sm_count and warps >= warps_wanted:
            return q
    best = max(reach.values())
    return next(q for q in splits if reach[q] == best)
