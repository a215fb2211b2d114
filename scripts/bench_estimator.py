"""``nbspark.NaiveBayes`` on a table in memory against scikit-learn's naive Bayes, in one process.

    python scripts/bench_estimator.py [--rows 200000] [--columns 10] [--repeat 3] [--json FILE]

Generated (seeded, never committed): ``--rows`` rows of ``--columns`` numbers drawn around a class
of 2, and the same shape of integer categories 0–4 that depend on the class. For each model
(``gaussian`` on the numbers, against ``GaussianNB``; ``categorical`` on the categories, against
``CategoricalNB``), ``fit`` then ``predict`` of the whole array, each the best of ``--repeat`` runs.
Prints the seconds and the ratios (nbspark over scikit-learn), and the share of predictions on which
the two agree; ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def data(rows: int, columns: int, seed: int = 7):
    """``(numbers, categories, labels)``: float64 and int64 arrays of ``rows`` × ``columns``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows)
    numbers = rng.normal(size=(rows, columns)) + 0.3 * y[:, None]
    categories = (rng.integers(0, 4, size=(rows, columns)) + y[:, None]) % 5
    return numbers, categories, y


def best(repeat: int, fn) -> tuple[float, object]:
    """The least seconds of ``repeat`` runs of ``fn()``, and its last result."""
    times, out = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - started)
    return min(times), out


def measure(rows: int, columns: int, repeat: int) -> dict:
    import numpy as np
    from sklearn.naive_bayes import CategoricalNB, GaussianNB

    import nbspark

    numbers, categories, y = data(rows, columns)
    result = {"rows": rows, "columns": columns}
    for name, X, theirs in (("gaussian", numbers, GaussianNB), ("categorical", categories, CategoricalNB)):
        fit, ours = best(repeat, lambda: nbspark.NaiveBayes(model=name).fit(X, y))
        predict, said = best(repeat, lambda: ours.predict(X))
        their_fit, model = best(repeat, lambda: theirs().fit(X, y))
        their_predict, their_said = best(repeat, lambda: model.predict(X))
        result[name] = {
            "fit_seconds": round(fit, 4),
            "predict_seconds": round(predict, 4),
            "sklearn_fit_seconds": round(their_fit, 4),
            "sklearn_predict_seconds": round(their_predict, 4),
            "fit_ratio": round(fit / their_fit, 2),
            "predict_ratio": round(predict / their_predict, 2),
            "agreement": float(np.mean(said == their_said)),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = measure(args.rows, args.columns, args.repeat)
    for name in ("gaussian", "categorical"):
        r = result[name]
        print(
            f"{name}: fit {r['fit_seconds']} s (scikit-learn {r['sklearn_fit_seconds']} s, "
            f"{r['fit_ratio']}×), "
            f"predict {r['predict_seconds']} s (scikit-learn {r['sklearn_predict_seconds']} s, "
            f"{r['predict_ratio']}×), predictions agree {r['agreement']:.4f}"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
