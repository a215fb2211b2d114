"""Learning one example a call, as a stream arrives, against River, in one process (no Spark).

    python scripts/bench_trickle.py [--data-dir DIR] [--corpus sms|reuters]
                                    [--model multinomial|bernoulli|complement] [--examples 2000] [--json FILE]

The SMS Spam Collection (``smsspam/SMSSpamCollection`` under the data dir; ``--data-dir``,
``$NBSPARK_DATA``, ``../shared/data``), or with ``--corpus reuters`` the Reuters-21578 stories that
have a topic, each labelled by its first (about 11,000 stories, 82 classes, a vocabulary of about
30,000 words against the SMS's 8,000 of 2 classes): ``nbspark.NaiveBayes(model="multinomial")`` (or
``--model bernoulli``, ``--model complement``) fitted on the messages after the first ``--examples``,
then, for each of the first ``--examples`` in order,

* ``learn``: ``partial_fit([text], [label])``, one call a message (River's ``learn_one``);
* ``turns``: ``predict([text])`` then ``partial_fit([text], [label])``, one message at a time:
  classify at any point (River's progressive validation), with the accuracy of those predictions.

River's ``naive_bayes.MultinomialNB(alpha=1)`` (``BernoulliNB``, ``ComplementNB``) does the same from the same
start, its messages tokenized by the same tokenizer (nbspark's default; ``learn_one``;
``predict_one`` then ``learn_one``). Prints µs per message for each and the ratios (nbspark over
River: below 1 is faster); ``--json`` writes them. The same start and the same counts: the two
multinomial models agree on every prediction but where a message holds a word never seen (nbspark
drops it, ``nb.unseen = drop``; River smooths it). River's ``ComplementNB.predict_one`` sums over
every class and word of the vocabulary: on Reuters each takes seconds, and ``--model complement
--corpus reuters --examples 300`` about 45 minutes, nearly all River's; its ``BernoulliNB.predict_one``
too (every word of the vocabulary weighs in each class, present or absent: 1.9 s a story on
Reuters), so ``--model bernoulli`` is measured on the SMS; River adds 1e-9 to each probability
before its logarithm, so the two Bernoulli models' posteriors differ slightly (the accuracies agree).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKENIZER = "nbspark"  # nbspark.NaiveBayes's default: both learners count the same tokens


def messages(data_dir: str | None) -> list[tuple[str, str]]:
    """``(label, text)`` of every SMS of the collection, in its order."""
    from nbspark.inputs.resolve import resolve_data_dir

    base = resolve_data_dir("smsspam", data_dir)
    lines = (base / "smsspam" / "SMSSpamCollection").read_text().splitlines()
    return [tuple(line.split("\t", 1)) for line in lines if "\t" in line]


def stories(data_dir: str | None) -> list[tuple[str, str]]:
    """``(first topic, title and body)`` of every Reuters-21578 story that has a topic, in file order."""
    from nbspark.inputs.parsers import decode_reuters, parse_reuters_sgml
    from nbspark.inputs.resolve import resolve_data_dir

    base = Path(str(resolve_data_dir("reuters21578", data_dir) / "reuters21578"))  # a local directory
    out = []
    for path in sorted(base.glob("reut2-*.sgm")):
        for story in parse_reuters_sgml(decode_reuters(path.read_bytes(), str(path))):
            if story.topics:
                out.append((story.topics[0], f"{story.title}\n{story.body}"))
    return out


def ours(start, trickle, kind: str, **settings) -> dict:
    """µs per message of nbspark's ``learn`` and ``turns``, and the accuracy of the turns (``settings``:
    more of ``nbspark.NaiveBayes``'s, as ``norm=True``)."""
    import nbspark

    def fitted():
        model = nbspark.NaiveBayes(model=kind, tokenizer=TOKENIZER, **settings)
        return model.fit([t for _, t in start], [y for y, _ in start])

    model = fitted()
    began = time.perf_counter()
    for label, text in trickle:
        model.partial_fit([text], [label])
    learn = time.perf_counter() - began
    model, right = fitted(), 0
    began = time.perf_counter()
    for label, text in trickle:
        right += model.predict([text])[0] == label
        model.partial_fit([text], [label])
    turns = time.perf_counter() - began
    n = len(trickle)
    return {"learn_us": learn / n * 1e6, "turns_us": turns / n * 1e6, "accuracy": right / n}


def river(start, trickle, kind: str) -> dict:
    """The same with River's ``MultinomialNB`` (``BernoulliNB``, ``ComplementNB``), the same tokenizer's
    counts of each message."""
    from river import naive_bayes

    from nbspark.inputs.tokens import tokenizer

    tok = tokenizer(TOKENIZER)
    learner = {
        "multinomial": naive_bayes.MultinomialNB,
        "bernoulli": naive_bayes.BernoulliNB,  # a word present where its count is > 0 (true_threshold)
        "complement": naive_bayes.ComplementNB,
    }[kind]

    def fitted():
        model = learner(alpha=1.0)
        for label, text in start:
            model.learn_one(Counter(tok(text)), label)
        return model

    model = fitted()
    began = time.perf_counter()
    for label, text in trickle:
        model.learn_one(Counter(tok(text)), label)
    learn = time.perf_counter() - began
    model, right = fitted(), 0
    began = time.perf_counter()
    for label, text in trickle:
        seen = model.feature_counts  # a word never seen is dropped, as nb.unseen = drop drops it
        right += model.predict_one(Counter(w for w in tok(text) if w in seen)) == label
        model.learn_one(Counter(tok(text)), label)
    turns = time.perf_counter() - began
    n = len(trickle)
    return {"learn_us": learn / n * 1e6, "turns_us": turns / n * 1e6, "accuracy": right / n}


def measure(items: list[tuple[str, str]], examples: int, kind: str) -> dict:
    trickle, start = items[:examples], items[examples:]
    mine, theirs = ours(start, trickle, kind), river(start, trickle, kind)
    return {
        "start": len(start),
        "examples": len(trickle),
        **{f"nbspark_{k}": round(v, 4 if k == "accuracy" else 1) for k, v in mine.items()},
        **{f"river_{k}": round(v, 4 if k == "accuracy" else 1) for k, v in theirs.items()},
        "learn_ratio": round(mine["learn_us"] / theirs["learn_us"], 2),
        "turns_ratio": round(mine["turns_us"] / theirs["turns_us"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--corpus", choices=("sms", "reuters"), default="sms", help="the examples (sms)")
    parser.add_argument(
        "--model",
        choices=("multinomial", "bernoulli", "complement"),
        default="multinomial",
        help="(multinomial)",
    )
    parser.add_argument("--examples", type=int, default=2000, help="messages learnt one a call (2000)")
    parser.add_argument("--json", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args()
    read = stories if args.corpus == "reuters" else messages
    result = {
        "corpus": args.corpus,
        "model": args.model,
        **measure(read(args.data_dir), args.examples, args.model),
    }
    print(
        f"{result['examples']:,} messages one a call, after a fit of {result['start']:,}:\n"
        f"  learn: nbspark {result['nbspark_learn_us']:,.0f} µs a message, River "
        f"{result['river_learn_us']:,.0f} ({result['learn_ratio']}×)\n"
        f"  predict then learn: nbspark {result['nbspark_turns_us']:,.0f} µs, River "
        f"{result['river_turns_us']:,.0f} ({result['turns_ratio']}×); accuracy "
        f"{result['nbspark_accuracy']:.4f} and {result['river_accuracy']:.4f}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
