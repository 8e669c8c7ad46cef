"""Lifting of lifting/linalg_sylvester.py: work in progress (issue 21)."""
