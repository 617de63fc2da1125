"""The submissions under ``submissions/`` are graded by test_ps3_grader.py, not run by nbval."""

collect_ignore = ["submissions"]
