"""The LLTM and the main job's character-level language model in PyTorch, written
as the C++ extension tutorial's Python LLTM, with lltm's parameter names and
layouts, so that a checkpoint lltm writes (Module.save) loads with
load_state_dict as it is:

- an LLTM layer's `weights` is [3S, S+F] over X = cat(h, x), its gates in the
  order input (sigmoid), output (sigmoid), candidate (elu); `bias` is [3S];
- CharLM: `embed.weight` [V, E], `lltm.layers.<l>.weights` / `.bias`,
  `head.weight` [V, S] and `head.bias` [V]; inputs are time-major [T, B].

Imported by torch_interop.py, torch_charlm_check.py and torch_charlm_train.py.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def lltm_cell(input, weights, bias, old_h, old_cell):
    """One step: the tutorial's formulas."""
    X = torch.cat([old_h, input], dim=1)
    gates = F.linear(X, weights, bias).chunk(3, dim=1)
    input_gate = torch.sigmoid(gates[0])
    output_gate = torch.sigmoid(gates[1])
    candidate_cell = F.elu(gates[2])
    new_cell = old_cell + candidate_cell * input_gate
    return torch.tanh(new_cell) * output_gate, new_cell


class LLTMLayer(nn.Module):
    def __init__(self, input_features, state_size):
        super().__init__()
        self.state_size = state_size
        self.weights = nn.Parameter(torch.empty(3 * state_size, state_size + input_features))
        self.bias = nn.Parameter(torch.empty(3 * state_size))

    def forward(self, x):
        """x [T, B, F] from a zero state -> every step's h [T, B, S]."""
        h = x.new_zeros(x.shape[1], self.state_size)
        c = x.new_zeros(x.shape[1], self.state_size)
        outputs = []
        for t in range(x.shape[0]):
            h, c = lltm_cell(x[t], self.weights, self.bias, h, c)
            outputs.append(h)
        return torch.stack(outputs)


class LLTMStack(nn.Module):
    def __init__(self, input_features, state_size, layers):
        super().__init__()
        self.layers = nn.ModuleList(
            LLTMLayer(input_features if l == 0 else state_size, state_size) for l in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class CharLM(nn.Module):
    """Embedding -> LLTM x layers -> Linear, as scripts/charlm_model.ts builds it."""

    def __init__(self, vocabulary, embedding, state_size, layers):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, embedding)
        self.lltm = LLTMStack(embedding, state_size, layers)
        self.head = nn.Linear(state_size, vocabulary)

    def forward(self, ids):
        """ids [T, B] (int) -> logits [T, B, V]."""
        return self.head(self.lltm(self.embed(ids)))

    def loss(self, ids, targets, reduction="mean"):
        logits = self(ids)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long(), reduction=reduction)


def charlm_from(config, tensors, dtype):
    """A CharLM of lltm's configuration (the 'charlm' metadata: vocabulary, embedding, stateSize, layers)
    holding the checkpoint's tensors, converted to dtype."""
    if config.get("dropout", 0) != 0:
        raise ValueError(f"the checkpoint's model has dropout {config['dropout']}; this model has none")
    model = CharLM(len(config["vocabulary"]), config["embedding"], config["stateSize"], config["layers"]).to(dtype)
    model.load_state_dict({name: t.to(dtype) for name, t in tensors.items()}, strict=True)
    return model
