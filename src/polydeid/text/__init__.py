"""Text utilities shared by training, export and evaluation: the word grid."""
