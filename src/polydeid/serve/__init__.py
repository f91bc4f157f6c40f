"""The HTTP service and its web page: ``polydeid serve`` (see :mod:`polydeid.serve.app`).

FastAPI, uvicorn and python-multipart (the ``serve`` extra) are imported only by
:mod:`polydeid.serve.app`, never by this package or its command-line module.
"""
