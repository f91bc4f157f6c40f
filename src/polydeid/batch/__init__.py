"""Batch de-identification: record jobs, the multiprocess runner, resume manifests."""
