"""The development corpora: every public corpus of ../shared/data with a development part,
and the two sets written for polydeid (``benchmarks/data`` in the repository), read as they
are scored.

``benchmarks/quality.py`` scores systems on all of them; the tagger's training
(:mod:`polydeid.train.tagger`) chooses its epoch on those of real text. ``use`` is the data
README's binding column: "select" data (MasakhaNER, NewsEye) only ever chooses and reports, never
trains. A corpus the tagger also trains on is scored on its held-out part
(:func:`polydeid.corpora.splits.in_holdout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from polydeid.corpora import Corpus, read_corpus
from polydeid.corpora.splits import in_holdout

#: The repository's root (a source checkout; the development data is not installed).
ROOT = Path(__file__).resolve().parents[3]
#: The shared public corpora.
DATA = ROOT.parent / "shared" / "data"
#: The development sets written for polydeid, kept in the repository (benchmarks/data).
REPO_DATA = ROOT / "benchmarks" / "data"


@dataclass(frozen=True)
class DevCorpus:
    name: str
    path: str
    format: str
    scheme: str
    lang: str
    #: Sentence corpora are cut into documents of this many sentences (for bootstrap CIs).
    sentences: int | None = None
    #: "all", or "dev": only the documents the tagger's training keeps out (30 % by id hash).
    part: str = "all"
    #: Reader options (columns, separators, how tokens are joined).
    options: tuple[tuple[str, object], ...] = ()
    #: The folder ``path`` is relative to: ../shared/data, or :data:`REPO_DATA`.
    root: Path = DATA
    #: The data README's use column: "train" (may be learned) or "select" (only chooses).
    use: str = "train"

    @property
    def location(self) -> Path:
        return self.root / self.path


#: UNER's ``.iob2``: UD word index, word, tag, "-", annotator; comment lines per sentence.
_UNER: tuple[tuple[str, object], ...] = (
    ("token_column", 1),
    ("tag_columns", (2,)),
    ("separator", "\t"),
    ("comment_prefix", "#"),
)

DEV_CORPORA = (
    DevCorpus("MEDDOCAN dev (es, clinical)", "meddocan/dev", "brat", "meddocan", "es"),
    DevCorpus(
        "ASQ-PHI dev, held-out 30 % (en, clinical queries)",
        "asq_phi/queries-dev.txt",
        "valuetags",
        "asq_phi",
        "en",
        part="dev",
    ),
    DevCorpus(
        "GermEval 2014 dev, held-out 30 % (de, news/Wikipedia)",
        "germeval2014/NER-de-dev.tsv",
        "germeval2014",
        "germeval2014",
        "de",
        1,
        part="dev",
    ),
    DevCorpus("ECHR ES dev (es, legal)", "echr/ES-all-dev.tsv", "conll", "echr_tab", "es", 10),
    DevCorpus("ECHR FR dev (fr, legal)", "echr/FR-all-dev.tsv", "conll", "echr_tab", "fr", 10),
    DevCorpus(
        "MasakhaNER dev lug (news)",
        "masakhaner/lug/dev.txt",
        "conll",
        "conll",
        "lg",
        10,
        use="select",
    ),
    DevCorpus(
        "MasakhaNER dev swa (news)",
        "masakhaner/swa/dev.txt",
        "conll",
        "conll",
        "sw",
        10,
        use="select",
    ),
    DevCorpus(
        "MasakhaNER dev kin (news)",
        "masakhaner/kin/dev.txt",
        "conll",
        "conll",
        "rw",
        10,
        use="select",
    ),
    DevCorpus(
        "MasakhaNER dev luo (news)",
        "masakhaner/luo/dev.txt",
        "conll",
        "conll",
        "luo",
        10,
        use="select",
    ),
    DevCorpus(
        "UNER dev en EWT (en, web)",
        "uner/en_ewt/en_ewt-ud-dev.iob2",
        "conll",
        "conll",
        "en",
        10,
        options=_UNER,
    ),
    DevCorpus(
        "UNER dev pt Bosque (pt, news)",
        "uner/pt_bosque/pt_bosque-ud-dev.iob2",
        "conll",
        "conll",
        "pt",
        10,
        options=_UNER,
    ),
    DevCorpus(
        "UNER dev zh GSDSimp (zh, Wikipedia)",
        "uner/zh_gsdsimp/zh_gsdsimp-ud-dev.iob2",
        "conll",
        "conll",
        "zh",
        10,
        options=(*_UNER, ("token_joiner", "")),
    ),
    DevCorpus(
        "WNUT 2017 dev (en, social media)",
        "wnut17/emerging.dev.conll",
        "conll",
        "wnut17",
        "en",
        10,
        options=(("separator", "\t"),),
    ),
    DevCorpus("LeNER-Br dev (pt, legal)", "lener_br/dev.conll", "conll", "lener_br", "pt", 10),
    DevCorpus(
        "factRuEval-2016 dev, held-out 30 % (ru, news)",
        "factrueval2016/devset",
        "factrueval2016",
        "factrueval2016",
        "ru",
        part="dev",
    ),
    DevCorpus(
        "NewsEye dev fr (fr, historical newspapers)",
        "newseye_fr/HIPE-2022-v2.1-newseye-dev-fr.tsv",
        "hipe2022",
        "hipe2022",
        "fr",
        1,
        use="select",
    ),
    DevCorpus(
        "presidio-research synth v2 (en, generic PII)",
        "presidio_research/synth_dataset_v2.json",
        "presidio_research",
        "presidio_research",
        "en",
    ),
    DevCorpus(
        "Clinical notes EN, written for polydeid (en, ICU/hospital notes)",
        "en_clinical_notes/brat",
        "brat",
        "polydeid_written",
        "en",
        root=REPO_DATA,
    ),
    DevCorpus(
        "Arztbriefe DE, written for polydeid (de, letters and reports)",
        "de_letters/brat",
        "brat",
        "polydeid_written",
        "de",
        root=REPO_DATA,
    ),
)


def read_dev_corpus(spec: DevCorpus) -> Corpus:
    """The corpus of ``spec`` as scored: cut into documents, only the held-out part where the
    tagger trains on the rest."""
    options = dict(spec.options)
    if spec.sentences is not None:
        options["sentences_per_document"] = spec.sentences
    corpus = read_corpus(
        spec.location,
        spec.format,
        scheme=spec.scheme,
        lang=spec.lang,
        name=spec.name,
        **options,
    )
    if spec.part == "dev":  # the tagger trains on the other 70 %
        kept = tuple(d for d in corpus.documents if in_holdout(d.id))
        corpus = Corpus(corpus.name, kept, corpus.failures, corpus.scheme)
    return corpus
