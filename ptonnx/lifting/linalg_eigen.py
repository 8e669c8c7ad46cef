"""Lifting of Eigh and Eigvalsh. Work in progress (issue 21)."""
