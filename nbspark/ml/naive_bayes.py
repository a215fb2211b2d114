"""nbspark as a ``pyspark.ml`` stage: ``CountingNaiveBayes``, an Estimator that fits by counting.

It follows MLlib's ``NaiveBayes`` conventions, so it drops into a ``Pipeline``, a
``CrossValidator`` and MLlib's evaluators unchanged:

* ``featuresCol``: an ``array<string>`` of tokens (``RegexTokenizer``, ``Tokenizer``) or a Vector
  (``CountVectorizer``, ``HashingTF``); ``labelCol``: numeric (``StringIndexer``); ``weightCol``.
* ``smoothing`` λ and ``modelType`` (``multinomial``, ``bernoulli`` or ``complement``: MLlib's
  complement weights, scikit-learn's ``ComplementNB(norm=False)``, no class prior, and the raw
  prediction normalised as MLlib's); MLlib's smoothed class
  prior ``log(n_c + λ) − log(N + K·λ)``; multinomial ``log(C(c,j) + λ) − log(C(c) + V·λ)`` and
  Bernoulli ``(C(c,j) + λ) / (n_c + 2λ)``, from the same formulas as the rest of nbspark (``nb``),
  with ``V`` the training vocabulary (tokens) or the vector size.
* ``predictionCol`` (double), ``probabilityCol`` and ``rawPredictionCol`` (vectors; the raw
  prediction is the joint log-likelihood, as MLlib's).
* What MLlib refuses is refused, in the same pass: a label that is not an integer >= 0, a null,
  NaN, infinite or negative weight, a negative, NaN or infinite vector value (a value other than
  0/1 for Bernoulli), vectors of different sizes, a null document, token or vector; and, when
  scoring, such vector values and nulls. Before any work: a label column that is not numeric (a
  string, as MLlib refuses it), a missing column, a dataset with no rows, and a label of 1,000 or
  more that no metadata declares (MLlib's limit on classes inferred from label values).

Fitting counts the training data once (one pass) and keeps the counts: the model applies the
smoothing when it transforms, so changing ``smoothing`` on a fitted model, or a ``CrossValidator``
over smoothing values (``fitMultiple``), reuses the counts. ``CountingNaiveBayes.counted`` counts
the passes over training data, which shows it. The model saves as MLlib models do (params in
``metadata/``) with nbspark's count table and manifest in ``nbspark/``, which ``nbspark.load``
reads too (when no weight was fractional).
"""

from __future__ import annotations

import threading

import numpy as np
from pyspark import keyword_only
from pyspark.ml.base import Estimator, Model, _FitMultipleIterator
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasFeaturesCol,
    HasLabelCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasWeightCol,
)
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable
from scipy import sparse

from nbspark.inputs.tokens import tokenizer
from nbspark.ml.labels import (
    check_vector_values,
    checked_label,
    declared_classes,
    fitted_on,
    label_names,
    new_columns,
)
from nbspark.ml.naive_bayes_dir import Counts, counts_table, label_namer, model_dir_counts, read_counts
from nbspark.ml.persist import CountsPersisted
from nbspark.naive_bayes.frames import count_documents
from nbspark.naive_bayes.model import (
    NBModel,
    bernoulli_log_probs,
    class_log_prior,
    complement_log_weights,
    csr_rows,
    log_posteriors,
    multinomial_log_prob,
    text_jll,
)
from nbspark.settings.naive_bayes import COUNTED_AS
from nbspark.spine.frames import checked_tokens, checked_weight, collect_checked
from nbspark.storage.manifests import NB_KIND

__all__ = ["CountingNaiveBayes", "CountingNaiveBayesModel", "Counts"]

MODEL_TYPES = ("multinomial", "bernoulli", "complement")


def _model_type(value) -> str:
    """A ``modelType`` this Estimator can fit, refused when it is set (the Estimator made, or
    ``setModelType``), not at ``fit``."""
    value = TypeConverters.toString(value)
    if value not in MODEL_TYPES:
        hint = (
            " (MLlib's Gaussian model of a Vector has no counting twin here: train a table's Gaussian or "
            "mixed model with nbspark train or nbspark.fit, and CountingTableNaiveBayesModel.fromModelDir "
            "makes it a stage)"
            if value == "gaussian"
            else ""
        )
        raise ValueError(f"modelType must be one of {', '.join(MODEL_TYPES)}, got {value!r}{hint}")
    return value


class _Params(
    HasFeaturesCol, HasLabelCol, HasWeightCol, HasPredictionCol, HasProbabilityCol, HasRawPredictionCol
):
    smoothing = Param(
        Params._dummy(), "smoothing", "the smoothing λ (> 0)", typeConverter=TypeConverters.toFloat
    )
    modelType = Param(
        Params._dummy(), "modelType", "multinomial, bernoulli or complement", typeConverter=_model_type
    )

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(smoothing=1.0, modelType="multinomial")

    def getSmoothing(self) -> float:
        return self.getOrDefault(self.smoothing)

    def getModelType(self) -> str:
        return self.getOrDefault(self.modelType)

    def _checked(self) -> None:
        if self.getModelType() not in MODEL_TYPES:
            raise ValueError(
                f"modelType must be one of {', '.join(MODEL_TYPES)}, got {self.getModelType()!r}"
            )
        if not np.isfinite(self.getSmoothing()) or self.getSmoothing() <= 0:
            raise ValueError(f"smoothing must be a finite number > 0, got {self.getSmoothing()}")

    def _count_key(self) -> tuple:
        """Every param that shapes the counts (everything but the smoothing and the output columns)."""
        weight = self.getOrDefault(self.weightCol) if self.isDefined(self.weightCol) else None
        return (self.getFeaturesCol(), self.getLabelCol(), weight, self.getModelType())


class CountingNaiveBayes(Estimator, _Params, DefaultParamsReadable, DefaultParamsWritable):
    """Naive Bayes by counting, as a ``pyspark.ml`` Estimator (see the module docstring)."""

    counted = 0  # passes over training data, all instances together

    @keyword_only
    def __init__(
        self,
        *,
        featuresCol="features",
        labelCol="label",
        predictionCol="prediction",
        probabilityCol="probability",
        rawPredictionCol="rawPrediction",
        smoothing=1.0,
        modelType="multinomial",
        weightCol=None,
    ):
        super().__init__()
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(
        self,
        *,
        featuresCol="features",
        labelCol="label",
        predictionCol="prediction",
        probabilityCol="probability",
        rawPredictionCol="rawPrediction",
        smoothing=1.0,
        modelType="multinomial",
        weightCol=None,
    ):
        return self._set(**self._input_kwargs)

    def _fit(self, dataset) -> CountingNaiveBayesModel:
        self._checked()
        return self._copyValues(CountingNaiveBayesModel(self._count(dataset)))

    def fitMultiple(self, dataset, paramMaps):
        """Models for each param map, counting the data once per distinct counting setting (so a
        grid over ``smoothing`` counts once)."""
        lock, cache = threading.Lock(), {}

        def fit_one(index):
            est = self.copy(paramMaps[index])
            est._checked()
            key = est._count_key()
            with lock:
                if key not in cache:
                    cache[key] = est._count(dataset)
            return est._copyValues(CountingNaiveBayesModel(cache[key]))

        return _FitMultipleIterator(fit_one, len(paramMaps))

    def _count(self, dataset) -> Counts:
        from pyspark.ml.linalg import VectorUDT
        from pyspark.sql import functions as F
        from pyspark.sql.types import NumericType

        type(self).counted += 1
        name, label = self.getFeaturesCol(), self.getLabelCol()
        for role, column in (("features", name), ("label", label)):
            if column not in dataset.columns:
                raise ValueError(
                    f"CountingNaiveBayes: no {role} column {column!r} (columns: {', '.join(dataset.columns)})"
                )
        label_type, features = dataset.schema[label].dataType, dataset.schema[name].dataType
        declared, names = declared_classes(dataset.schema[label]), label_names(dataset.schema[label])
        if not isinstance(label_type, NumericType):  # MLlib's rule: a string "1" is refused too
            raise ValueError(
                f"CountingNaiveBayes: label column {label!r} is {label_type.simpleString()}; labels must "
                "be numeric "
                "(StringIndexer turns strings into them)"
            )
        weight = checked_weight(
            dataset, self.getWeightCol() if self.isDefined(self.weightCol) else None, "CountingNaiveBayes"
        )
        if isinstance(features, VectorUDT):
            no_vector = F.raise_error(
                F.lit(f"CountingNaiveBayes: the features column {name!r} holds a null vector")
            )
            checked = F.when(F.col(name).isNull(), no_vector).otherwise(F.col(name))
        else:
            checked = checked_tokens(dataset, name, "CountingNaiveBayes")
        df = dataset.select(checked_label(label).alias("y"), weight.alias("w"), checked.alias("f"))
        if isinstance(features, VectorUDT):
            from pyspark.ml.stat import Summarizer

            # the values checked in the same pass: min, max, non-zeros and the plain sum of each class's
            # vectors
            values = Summarizer.metrics("min", "max", "numNonZeros", "sum").summary(F.col("f"))
            rows = collect_checked(
                df.groupBy("y").agg(
                    F.sum("w").alias("n"),
                    Summarizer.sum(F.col("f"), F.col("w")).alias("s"),
                    values.alias("v"),
                )
            )
            rows.sort(key=lambda r: r["y"])
            fitted_on([r["y"] for r in rows], declared)
            sizes = sorted({len(r["s"]) for r in rows})
            if len(sizes) > 1:
                raise ValueError(
                    f"CountingNaiveBayes: feature vectors of different sizes ({', '.join(map(str, sizes))})"
                )
            for r in rows:
                check_vector_values(r["v"], self.getModelType())
            size = sizes[0] if rows else 0
            return Counts(
                tuple(r["y"] for r in rows),
                np.array([r["n"] for r in rows], float),
                tuple(map(str, range(size))),
                np.array([r["s"].toArray() for r in rows]).reshape(len(rows), size),
                True,
                declared,
                names,
            )
        weighted = self.isDefined(self.weightCol) and bool(self.getWeightCol())
        counted_as = COUNTED_AS.get(self.getModelType(), self.getModelType())  # complement: multinomial
        table = count_documents(df, "f", "y", "w" if weighted else None, model=counted_as)
        rows = [
            (r["event"], r["label"], r["feature"], r["sum"] if weighted else float(r["n"]))
            for r in collect_checked(table.where(table.event.isin("Y", "YX")))
        ]
        classes = tuple(sorted(float(y) for event, y, _, _ in rows if event == "Y"))
        fitted_on(classes, declared)
        vocab = tuple(sorted({feature for event, _, feature, _ in rows if event == "YX"}))
        cidx, vidx = {c: i for i, c in enumerate(classes)}, {t: i for i, t in enumerate(vocab)}
        class_count, counts = np.zeros(len(classes)), np.zeros((len(classes), len(vocab)))
        for event, label, feature, value in rows:
            if event == "Y":
                class_count[cidx[float(label)]] = value
            else:
                counts[cidx[float(label)], vidx[feature]] = value
        return Counts(classes, class_count, vocab, counts, False, declared, names)


class CountingNaiveBayesModel(Model, _Params, CountsPersisted):
    """The fitted counts; the smoothing is applied when transforming (``setSmoothing`` reuses the counts)."""

    KIND = NB_KIND

    def __init__(self, counts: Counts | None = None):
        super().__init__()
        self.counts = counts

    def setSmoothing(self, value: float) -> CountingNaiveBayesModel:
        return self._set(smoothing=value)

    @property
    def numClasses(self) -> int:
        """The length of the probability and raw prediction vectors: the classes the label's
        metadata declares (``StringIndexer``'s), or the largest label + 1, so that
        ``probability[label]`` is that label's, as MLlib's evaluators read it. A label that training
        never saw (a fold without a rare class) has probability 0."""
        return max(int(max(self.counts.classes)) + 1, self.counts.declared)

    @property
    def numFeatures(self) -> int:
        return len(self.counts.features)

    def _smoothed(self, class_count: np.ndarray, counts: np.ndarray) -> tuple:
        """``(pi, weights, bias, theta)`` of per-class counts under the current smoothing: the class
        prior (MLlib's smoothed one over the fitted classes, or the model directory's), the scoring
        weights and bias, and
        MLlib's ``theta`` (multinomial ``log P(feature | class)``, Bernoulli ``log p``, complement
        the weights). The one place the stage applies the formulas of ``naive_bayes.model``."""
        self._checked()
        c, lam = self.counts, self.getSmoothing()
        prior = lam if c.prior_alpha is None else c.prior_alpha
        with np.errstate(divide="ignore"):  # a class of no example (partial_fit's classes): log 0 = -inf
            pi = class_log_prior(class_count, c.class_count.sum(), np.log, prior, len(c.classes))
        kind = self.getModelType()
        if kind == "complement":  # MLlib's: the complement weights (not normalised), no class prior
            weights = complement_log_weights(counts, lam)
            return pi, weights, np.zeros(len(class_count)), weights
        if kind == "multinomial":
            weights = multinomial_log_prob(counts, counts.sum(axis=1)[:, None], lam, counts.shape[1], np.log)
            return pi, weights, np.zeros(len(class_count)), weights
        p_log, q_log = bernoulli_log_probs(counts, class_count[:, None], lam, np.log)
        return pi, p_log - q_log, q_log.sum(axis=1), p_log

    def scoring_model(self) -> NBModel:
        """The counts under the current smoothing as ``naive_bayes.model.NBModel``, scored by the one
        joint log-likelihood of nbspark (``text_jll``: ``X @ weights.T + bias + class_log_prior``)."""
        c = self.counts
        pi, weights, bias, _ = self._smoothed(c.class_count, c.counts)
        if self.getModelType() == "complement":
            pi = np.zeros(len(c.classes))
        vocab = {t: i for i, t in enumerate(c.features)}
        return NBModel(
            self.getModelType(),
            tuple(c.classes),
            pi,
            vocab=vocab,
            weights=weights,
            bias=bias,
            alpha=self.getSmoothing(),
        )

    def _by_label(self) -> tuple[np.ndarray, np.ndarray]:
        """The class counts and counts with a row for each label value 0 … ``numClasses`` − 1, a
        label training never saw counted 0."""
        c, at = self.counts, np.array(self.counts.classes).astype(int)
        class_count, counts = np.zeros(self.numClasses), np.zeros((self.numClasses, c.counts.shape[1]))
        class_count[at], counts[at] = c.class_count, c.counts
        return class_count, counts

    @property
    def pi(self):
        """MLlib's ``NaiveBayesModel.pi``: ``log P(label)`` of each label value 0 … ``numClasses`` − 1
        (MLlib's smoothed prior; a label never seen in training, −inf). A complement model has it
        too, as MLlib's, though it scores without it."""
        from pyspark.ml.linalg import DenseVector

        pi = np.full(self.numClasses, -np.inf)
        pi[np.array(self.counts.classes).astype(int)] = self._smoothed(
            self.counts.class_count, self.counts.counts
        )[0]
        return DenseVector(pi)

    @property
    def theta(self):
        """MLlib's ``NaiveBayesModel.theta``, ``numClasses`` × ``numFeatures``: ``log P(feature |
        label)`` (multinomial), ``log p`` (Bernoulli) or the complement weights, its columns the
        vector's indices, or the tokens in ``nbspark.load``'s ``vocabulary_`` order (sorted)."""
        from pyspark.ml.linalg import DenseMatrix

        theta = self._smoothed(*self._by_label())[3]
        return DenseMatrix(theta.shape[0], theta.shape[1], theta.ravel(order="F").tolist())

    def _transform(self, dataset):
        from pyspark.ml.linalg import DenseVector, VectorUDT
        from pyspark.sql import functions as F
        from pyspark.sql.types import DoubleType, StructField, StructType

        model = self.scoring_model()
        classes, vectors = np.array(self.counts.classes), self.counts.vectors
        at, size = classes.astype(int), self.numClasses  # each fitted class's place in the vectors
        vocab, width = model.vocab, len(model.vocab)
        bernoulli, complement = self.getModelType() == "bernoulli", self.getModelType() == "complement"
        name = self.getFeaturesCol()
        split = tokenizer(self.counts.tokenizer)

        def score(features):
            if features is None:  # as fitting refuses it
                raise ValueError(
                    f"CountingNaiveBayes: the {'features' if vectors else 'tokens'} column {name!r} holds "
                    f"a null {'vector' if vectors else 'document'}"
                )
            if vectors:
                x = features.toArray()
                if len(x) != width:  # MLlib refuses it too ("The number of features ...")
                    raise ValueError(
                        f"CountingNaiveBayes: a feature vector of {len(x)} values; "
                        f"the model was fit on {width}"
                    )
                if bernoulli and not np.all((x == 0) | (x == 1)):
                    raise ValueError("Bernoulli naive Bayes needs 0/1 feature values")
                if not (
                    np.all(x >= 0) and np.all(np.isfinite(x))
                ):  # NaN fails x >= 0; MLlib refuses these too
                    raise ValueError("multinomial naive Bayes needs feature values >= 0, finite")
                X = sparse.csr_matrix(x[None, :])
            else:
                if isinstance(features, str):  # a text: split as the model's own training split it
                    features = split(features)
                if None in features:  # as fitting refuses it (frames.checked_tokens)
                    raise ValueError(f"CountingNaiveBayes: the tokens column {name!r} holds a null token")
                index = np.array([vocab[t] for t in features if t in vocab], np.int64)
                X = csr_rows(np.zeros(len(index), np.int64), index, 1, width, bernoulli)
            jll = text_jll(model, X)[0]
            raw, proba = np.full(size, -np.inf), np.zeros(size)
            log_post = log_posteriors(jll[None, :])[0]
            raw[at], proba[at] = (
                (log_post if complement else jll),
                np.exp(log_post),
            )  # MLlib's raw of each kind
            return (DenseVector(raw), DenseVector(proba), float(classes[int(np.argmax(jll))]))

        schema = StructType(
            [
                StructField("raw", VectorUDT()),
                StructField("proba", VectorUDT()),
                StructField("pred", DoubleType()),
            ]
        )
        outputs = (self.rawPredictionCol, self.probabilityCol, self.predictionCol)
        new_columns("CountingNaiveBayesModel", dataset.columns, [self.getOrDefault(p) for p in outputs])
        tmp = f"_{self.uid}_scored"
        out = dataset.withColumn(tmp, F.udf(score, schema)(F.col(self.getFeaturesCol())))
        for param, field in (
            (self.rawPredictionCol, "raw"),
            (self.probabilityCol, "proba"),
            (self.predictionCol, "pred"),
        ):
            if self.getOrDefault(param):
                out = out.withColumn(self.getOrDefault(param), F.col(f"{tmp}.{field}"))
        return out.drop(tmp)

    def copy(self, extra=None):
        model = super().copy(extra)
        model.counts = self.counts
        return model

    def counts_table(self):
        """The counts as an nbspark count table and its manifest, for ``ml.persist.CountsWriter``
        (``ml.naive_bayes_dir.counts_table``)."""
        return counts_table(self.counts, self.getModelType(), self.getSmoothing())

    @classmethod
    def from_counts(cls, root, manifest: dict) -> CountingNaiveBayesModel:
        """The model of a checked ``PATH/nbspark`` (``ml.persist.CountsReader``) or model directory
        (``ml.naive_bayes_dir.read_counts``)."""
        return cls(read_counts(root, manifest))

    @classmethod
    def fromModelDir(cls, path) -> CountingNaiveBayesModel:
        """A text model trained by the command line or the train job (``nbspark train``), as a
        Pipeline stage: it scores a features column of tokens, or of texts (split by the model's own
        tokenizer), with the model's smoothing and class prior, as ``nbspark.load`` scores them.
        Its label values are the model's classes in ``classes_`` order (``labels`` names them, for
        ``IndexToString``). Table models (Gaussian, categorical, mixed) are refused here
        (``ml.naive_bayes_dir.model_dir_counts``): ``CountingTableNaiveBayesModel`` reads them."""
        counts, smoothing, kind = model_dir_counts(path)
        return cls(counts)._set(smoothing=smoothing, modelType=kind)

    @property
    def labels(self) -> list[str]:
        """Label value i's name (``IndexToString(labels=model.labels)``): the ``StringIndexer``'s labels
        the model was fitted with, or a model directory's classes; the values as text without names."""
        name = label_namer(self.counts)
        return [name(float(i)) for i in range(self.numClasses)]

    def setFeaturesCol(self, value: str) -> CountingNaiveBayesModel:
        return self._set(featuresCol=value)

    def setPredictionCol(self, value: str) -> CountingNaiveBayesModel:
        return self._set(predictionCol=value)

    def setProbabilityCol(self, value: str) -> CountingNaiveBayesModel:
        return self._set(probabilityCol=value)

    def setRawPredictionCol(self, value: str) -> CountingNaiveBayesModel:
        return self._set(rawPredictionCol=value)
