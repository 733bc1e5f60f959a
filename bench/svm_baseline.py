"""Child process of `bench/bench_engine.py`: the linear SVM baseline on binary 1..n-grams.

    python -m bench.svm_baseline TRAIN.jsonl TEST.jsonl N OUT.json

Each JSONL record has `sents` (lists of tokens) and `label`. A document's text
is its tokens joined by single spaces (sentences in order), vectorized with
CountVectorizer(binary=True, ngram_range=(1, N), token_pattern=r"\\S+")
(its default lower-casing is a no-op: the tokens are already lower case) and
classified with LinearSVC at its defaults. n-grams may span a
sentence boundary, which the subtree patterns cannot. The whole process (reading,
vectorizing, fitting, predicting) is what the caller measures; the phases'
process times are written too.
"""
import json
import sys
import time
import warnings


def load(path):
    texts, labels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            texts.append(" ".join(" ".join(s) for s in r["sents"]))
            labels.append(r["label"])
    return texts, labels


def read_and_vectorize(train, test, n):
    """(the vectorizer, the training matrix, training labels, test texts, test labels, read CPU s, vectorize CPU s)."""
    from sklearn.feature_extraction.text import CountVectorizer

    t0 = time.process_time()
    X_train, y_train = load(train)
    X_test, y_test = load(test)
    t_read = time.process_time() - t0
    t0 = time.process_time()
    vec = CountVectorizer(binary=True, ngram_range=(1, n), token_pattern=r"\S+")
    A = vec.fit_transform(X_train)
    return vec, A, y_train, X_test, y_test, t_read, time.process_time() - t0


def main() -> None:
    train, test, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    t0 = time.process_time()
    import sklearn
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    t_import = time.process_time() - t0
    vec, A, y_train, X_test, y_test, t_read, t_vec = read_and_vectorize(train, test, n)
    t0 = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        svm = LinearSVC().fit(A, y_train)
    t_fit = time.process_time() - t0
    t0 = time.process_time()
    pred = svm.predict(vec.transform(X_test))
    t_pred = time.process_time() - t0
    correct = int(sum(p == g for p, g in zip(pred, y_test)))
    result = {
        "sklearn": sklearn.__version__,
        "n_features": int(A.shape[1]),
        "nnz_train": int(A.nnz),
        "accuracy": correct / len(y_test),
        "correct": correct,
        "n_test": len(y_test),
        "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught),
        "n_iter": int(getattr(svm, "n_iter_", -1)),
        "import_cpu_seconds": t_import,
        "read_cpu_seconds": t_read,
        "vectorize_train_cpu_seconds": t_vec,
        "fit_cpu_seconds": t_fit,
        "predict_cpu_seconds": t_pred,
    }
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
