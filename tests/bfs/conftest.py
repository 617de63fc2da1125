"""The submissions under ``submissions/`` are graded by test_questions.py, not run by nbval."""

collect_ignore = ["submissions"]
