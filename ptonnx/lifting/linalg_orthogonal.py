"""Lifting of QR, SVD and MatrixPinv. Work in progress (issue 21)."""
