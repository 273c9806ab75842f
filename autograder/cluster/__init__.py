"""Grading across machines on Dask distributed: nodes with warm pools, a client that keeps the ledger."""
