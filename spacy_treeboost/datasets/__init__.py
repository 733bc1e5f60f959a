"""Corpora: readers of public text-classification corpora and JSONL (`corpora`, spaCy-free), the
`spacy_treeboost.JsonlCorpus.v1` reader for `spacy train` (`readers`) and JSONL to DocBin conversion
(`convert`). Nothing is imported here, so that each stays as light as its own imports."""
