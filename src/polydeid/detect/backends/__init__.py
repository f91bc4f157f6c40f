"""Bring-your-own-model detectors: Hugging Face token classifiers, LLM extractors, ….

Each backend lives in its own module or package and imports its heavy dependencies (torch,
transformers, HTTP clients) only when a model is loaded, so importing this package costs
nothing:

* :mod:`polydeid.detect.backends.hf` — ``HfWordGridDetector`` (per-language word-grid token
  classifiers with a ``router_config.json``) and ``HfPipelineDetector`` (the transformers
  token-classification pipeline), both loaded only from local directories; label maps in
  ``labelmaps/*.toml``.
"""
