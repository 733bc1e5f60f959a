"""Child process of `bench/bench_default_learner.py`: a scikit-learn peer on binary 1..n-grams.

    python -m bench.peer_baseline TRAIN.jsonl TEST.jsonl N {svc,lrcv} OUT.json

"svc": CountVectorizer(binary=True, ngram_range=(1, N), token_pattern=r"\\S+") + LinearSVC at its defaults,
as `bench/svm_baseline.py`; "lrcv": the same features + LogisticRegressionCV over the default learner's
C grid with 5 folds (liblinear). The whole process (reading, vectorizing, fitting, predicting) is what the
caller measures; the phases' process times are written too.
"""
import json
import sys
import time

from bench.svm_baseline import read_and_vectorize

CS = (0.01, 0.03, 0.1, 0.25, 1.0, 3.0, 10.0)


def main() -> None:
    train, test, n, kind, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.svm import LinearSVC

    vec, A, y_train, X_test, y_test, t_read, t_vec = read_and_vectorize(train, test, n)
    t0 = time.process_time()
    if kind == "svc":
        model = LinearSVC().fit(A, y_train)
    else:
        model = LogisticRegressionCV(Cs=list(CS), cv=5, solver="liblinear").fit(A, y_train)
    t_fit = time.process_time() - t0
    pred = model.predict(vec.transform(X_test))
    correct = int(sum(p == g for p, g in zip(pred, y_test)))
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"n_features": int(A.shape[1]), "nnz_train": int(A.nnz), "accuracy": correct / len(y_test),
                   "read_cpu_seconds": t_read, "vectorize_cpu_seconds": t_vec, "fit_cpu_seconds": t_fit}, f)


if __name__ == "__main__":
    main()
