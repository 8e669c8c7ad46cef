"""Sylvester equations as a decomposition. Work in progress (issue 21)."""
