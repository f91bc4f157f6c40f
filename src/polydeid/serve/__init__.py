"""The HTTP service and its web page: ``polydeid serve`` (see :mod:`polydeid.serve.app`).

FastAPI, uvicorn and python-multipart (the ``serve`` extra) are imported only by the app
module :mod:`polydeid.serve.app` and the private modules it reaches, never by this package or
its command-line module.
"""
