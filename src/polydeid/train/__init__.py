"""Training scripts: fine-tuning the tagger (``python -m polydeid.train.tagger``)."""
