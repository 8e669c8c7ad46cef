"""Lifting of the Sylvester and Lyapunov solvers. Work in progress (issue 21)."""
