"""The submissions under ``submissions/`` are graded by test_grader.py, not run by nbval."""

collect_ignore = ["submissions"]
