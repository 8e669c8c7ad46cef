"""Lifting of lifting/linalg_orthogonal.py: work in progress (issue 21)."""
