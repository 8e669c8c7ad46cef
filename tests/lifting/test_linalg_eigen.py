"""Lifting of lifting/linalg_eigen.py: work in progress (issue 21)."""
