"""Running numba-cuda's own simulator tests with course_lib's scheduler installed."""
