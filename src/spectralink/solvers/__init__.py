"""Exact small solvers shared by the methods (pure functions, no estimator state)."""
