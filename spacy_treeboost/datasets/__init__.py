"""Corpora: JSONL input (`jsonl`, spaCy-free), the `spacy_treeboost.JsonlCorpus.v1` reader for `spacy train`
(`readers`) and JSONL to DocBin conversion (`convert`). Nothing is imported here, so that each stays light."""
