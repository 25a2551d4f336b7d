import pytest


@pytest.fixture
def held_out_trained(monkeypatch):
    """`tau emotions eval`'s held-out model, trained in the background worker (tests/background.py)."""
    from tau_emotion.emotion_pack import classifier
    from tau_emotion.emotion_pack.anchors import anchor_rows
    from tests import background

    model = background.result("held_out")
    key = classifier.training_key([r for r in anchor_rows() if r["index"] in range(8)])
    monkeypatch.setitem(classifier._HELD_OUT, key, model)
    return model
