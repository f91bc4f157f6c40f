"""The HTTP service and its web page (FastAPI; ``polydeid serve``)."""
