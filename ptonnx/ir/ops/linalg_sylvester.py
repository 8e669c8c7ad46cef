"""Sylvester and Lyapunov equation IR ops. Work in progress (issue 21)."""
