"""Transform stage: policies choose an operator per category and the redactor applies them."""
