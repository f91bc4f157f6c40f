"""Scripts whose words are not set off by spaces.

Chinese, Japanese, Thai, Lao, Khmer and Burmese write no spaces between words, and Korean
writes its particles against the word they follow ("환자는", the patient + topic particle). Next
to a letter of one of these scripts a word has no boundary: a phrase, a unit or a name may be
glued to the letters around it, and rules that would otherwise demand a word boundary
(``\\b``-like look-arounds, whole-word matching) must not demand it there.
"""

from __future__ import annotations

import regex

#: The scripts as the body of a regex character class, for building look-arounds.
UNSPACED_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
#: One letter of such a script.
UNSPACED = regex.compile(f"[{UNSPACED_CLASS}]")
