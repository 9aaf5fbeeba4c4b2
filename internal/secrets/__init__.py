"""Docker registry secrets: registry-host parsing and the per-namespace secret index."""
