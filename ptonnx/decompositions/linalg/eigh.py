"""Eigh and Eigvalsh as decompositions. Work in progress (issue 21)."""
