"""Transformer encoders as PyTorch exports them at opset 17: BERT-base (Hugging Face ``BertModel``) and ViT-B/16
(torchvision's ``vit_b_16``).

Both stack encoder layers of multi-head self-attention (query, key and value projections as ``MatMul`` + ``Add``,
``Reshape``/``Transpose`` into heads, ``MatMul`` of queries and transposed keys divided by ``sqrt(head size)``,
``Softmax``, ``MatMul`` with the values, heads merged and projected) and a feed-forward block (4x wider, exact GELU
written with ``Erf``), with residual connections and ``LayerNormalization``. BERT normalizes after each residual and
masks padded positions by adding -10000 to their scores; ViT normalizes before each block and prepends a class token
to the patch embeddings. Weights are drawn with deviation 0.02, their published initialisation.
"""

import numpy as np
from onnx import TensorProto

from .builder import OnnxBuilder


def _shape(b, *dims):
    return b.constant(list(dims), "shape", "int64")


def _self_attention(b, x, seq, hidden, heads, mask=None):
    """Multi-head self-attention over ``x`` of shape ``(1, seq, hidden)``; ``mask`` is added to the scores."""
    head = hidden // heads

    def split_heads(t, perm):  # (1, seq, hidden) -> (1, heads, seq, head), or (1, heads, head, seq) for the keys
        return b.node("Transpose", [b.node("Reshape", [t, _shape(b, 1, seq, heads, head)])], perm=perm)

    query = split_heads(b.dense(x, hidden, hidden), [0, 2, 1, 3])
    key = split_heads(b.dense(x, hidden, hidden), [0, 2, 3, 1])
    value = split_heads(b.dense(x, hidden, hidden), [0, 2, 1, 3])
    scores = b.node("Div", [b.node("MatMul", [query, key]), b.scalar(np.sqrt(head))])
    if mask is not None:
        scores = b.node("Add", [scores, mask])
    context = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), value])
    context = b.node("Reshape", [b.node("Transpose", [context], perm=[0, 2, 1, 3]), _shape(b, 1, seq, hidden)])
    return b.dense(context, hidden, hidden)


def _feed_forward(b, x, hidden):
    """The position-wise feed-forward block: ``hidden -> 4 * hidden``, GELU, ``-> hidden``."""
    return b.dense(b.activation(b.dense(x, hidden, 4 * hidden), "gelu"), 4 * hidden, hidden)


def bert_base(seq=128, layers=12, hidden=768, heads=12, vocab=30522):
    """A BERT-base encoder (Hugging Face ``BertModel``: embeddings, post-norm encoder layers and the tanh pooler).

    Parameters
    ----------
    seq : int, optional
        Sequence length (at most 512, the position table's size).
    layers, hidden, heads : int, optional
        Encoder layers, hidden width and attention heads (12, 768 and 12 for BERT-base).
    vocab : int, optional
        Word-piece vocabulary size (30522 for the uncased English model).

    Returns
    -------
    onnx.ModelProto
        Inputs ``input_ids``, ``attention_mask`` and ``token_type_ids``, int64 of shape ``(1, seq)``; outputs the
        last hidden state ``(1, seq, hidden)`` and the pooled class token ``(1, hidden)``.
    """
    b = OnnxBuilder(seed=6)
    words = b.node("Gather", [b.weight("word_embeddings", (vocab, hidden), 0.02), "input_ids"])
    positions = b.node("Gather", [b.weight("position_embeddings", (512, hidden), 0.02),
                                  b.constant(np.arange(seq)[None], "position_ids", "int64")])
    types = b.node("Gather", [b.weight("token_type_embeddings", (2, hidden), 0.02), "token_type_ids"])
    x = b.layer_norm(b.node("Add", [b.node("Add", [words, positions]), types]), hidden, 1e-12)
    # the extended attention mask: 0 where attended, -10000 on padding, broadcast over heads and query positions
    mask = b.node("Cast", [b.node("Unsqueeze", ["attention_mask", b.constant([1, 2], "axes", "int64")])],
                  to=TensorProto.FLOAT)
    mask = b.node("Mul", [b.node("Sub", [b.scalar(1.0), mask]), b.scalar(-10000.0)])
    for _ in range(layers):
        x = b.layer_norm(b.node("Add", [x, _self_attention(b, x, seq, hidden, heads, mask)]), hidden, 1e-12)
        x = b.layer_norm(b.node("Add", [x, _feed_forward(b, x, hidden)]), hidden, 1e-12)
    first = b.node("Gather", [x, b.constant(0, "index", "int64")], axis=1)
    pooled = b.activation(b.gemm(first, hidden, hidden), "tanh")
    inputs = [(name, "int64", (1, seq)) for name in ("input_ids", "attention_mask", "token_type_ids")]
    return b.model("bert_base", inputs, [(x, (1, seq, hidden)), (pooled, (1, hidden))])


def bert_inputs(model, rng):
    """Inputs for :func:`bert_base`: random word ids of its vocabulary, the last eighth of the positions padding
    (masked out), and the second half of the positions a second segment.

    Parameters
    ----------
    model : onnx.ModelProto
        A model built by :func:`bert_base` (its sequence length and vocabulary are read from it).
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    dict of str to numpy.ndarray
    """
    seq = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    vocab = next(i.dims[0] for i in model.graph.initializer if i.name.startswith("word_embeddings"))
    mask = np.ones((1, seq), "int64")
    mask[:, seq - seq // 8:] = 0
    types = np.zeros((1, seq), "int64")
    types[:, seq // 2:] = 1
    return {"input_ids": rng.integers(0, vocab, (1, seq)), "attention_mask": mask, "token_type_ids": types}


def vit_b16(image=224, patch=16, layers=12, hidden=768, heads=12, num_classes=1000):
    """ViT-B/16 (torchvision's ``vit_b_16``): a stride-16 16x16 convolution embeds the patches, a learned class token
    is prepended and position embeddings added, pre-norm encoder layers, a final layer norm and a linear head on the
    class token.

    Parameters
    ----------
    image, patch : int, optional
        Input height and width, and patch size (224 and 16: 196 patches and the class token).
    layers, hidden, heads : int, optional
        Encoder layers, hidden width and attention heads (12, 768 and 12 for ViT-B).
    num_classes : int, optional
        Classifier outputs.

    Returns
    -------
    onnx.ModelProto
        Input ``image`` of shape ``(1, 3, image, image)``, output the ``(1, num_classes)`` logits.
    """
    b = OnnxBuilder(seed=7)
    patches = (image // patch) ** 2
    seq = patches + 1
    x = b.conv("image", 3, hidden, patch, patch, pad=0)
    x = b.node("Transpose", [b.node("Reshape", [x, _shape(b, 1, hidden, patches)])], perm=[0, 2, 1])
    x = b.node("Concat", [b.weight("class_token", (1, 1, hidden), 0.02), x], axis=1)
    x = b.node("Add", [x, b.weight("position_embedding", (1, seq, hidden), 0.02)])
    for _ in range(layers):
        x = b.node("Add", [x, _self_attention(b, b.layer_norm(x, hidden, 1e-6), seq, hidden, heads)])
        x = b.node("Add", [x, _feed_forward(b, b.layer_norm(x, hidden, 1e-6), hidden)])
    x = b.layer_norm(x, hidden, 1e-6)
    logits = b.gemm(b.node("Gather", [x, b.constant(0, "index", "int64")], axis=1), hidden, num_classes)
    return b.model("vit_b16", [("image", "float32", (1, 3, image, image))], [(logits, (1, num_classes))])
