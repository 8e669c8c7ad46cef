"""Orthogonal factorisations IR ops (QR, SVD, MatrixPinv). Work in progress (issue 21)."""
