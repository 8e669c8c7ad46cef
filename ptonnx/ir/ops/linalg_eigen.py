"""Symmetric eigendecomposition IR ops (Eigh, Eigvalsh). Work in progress (issue 21)."""
