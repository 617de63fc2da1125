"""What every BFS kernel module shares: the lesson, the unvisited mark, the signature of an int32 array."""

LESSON = "lessons/03_bfs.ipynb"
#: Depth of a vertex the search has not reached.
UNVISITED = -1
#: Numba type of the int32 arrays (C-contiguous) in the kernels' compile-check signatures.
I32 = "int32[::1]"
