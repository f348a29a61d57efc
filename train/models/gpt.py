# The model `kernelgate train-check` trains by default: a small GPT of the nanoGPT shape (4 layers,
# 4 heads, 128-wide embeddings, 64-token blocks), on tokens kernelgate makes itself — sequences
# of a fixed random bigram language over 96 symbols, so the loss has somewhere to go (from
# ln 96 ~ 4.56 towards the language's entropy) and nothing is downloaded.
#
# It is a problem file in KernelBench's layout (Model, get_inputs, get_init_inputs), plus what
# train-check reads when a problem defines it: get_batch(step) and TRAIN_LR. Model's forward
# returns the cross-entropy loss, so train-check trains on it directly.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 96
BLOCK = 64
LAYERS = 4
HEADS = 4
EMBED = 128
BATCH = 8
TRAIN_LR = 1e-3


def _corpus():
    g = torch.Generator()
    g.manual_seed(20261203)
    # Each symbol is followed by one of 4 likely successors most of the time.
    logits = torch.randn(VOCAB, VOCAB, generator=g) * 0.5
    for s in range(VOCAB):
        logits[s, torch.randperm(VOCAB, generator=g)[:4]] += 4.0
    probs = torch.softmax(logits, dim=1)
    rows = 512
    seq = torch.empty(rows, BLOCK + 1, dtype=torch.long)
    seq[:, 0] = torch.randint(0, VOCAB, (rows,), generator=g)
    for t in range(1, BLOCK + 1):
        seq[:, t] = torch.multinomial(probs[seq[:, t - 1]], 1, generator=g).squeeze(1)
    return seq


CORPUS = _corpus()  # made when the file is loaded, before any submitted kernel is installed


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(EMBED, 3 * EMBED)
        self.c_proj = nn.Linear(EMBED, EMBED)
        self.register_buffer("mask", torch.tril(torch.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(EMBED, dim=2)
        q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(EMBED, 4 * EMBED)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * EMBED, EMBED)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(EMBED)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(EMBED)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, EMBED)
        self.wpe = nn.Embedding(BLOCK, EMBED)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(EMBED)
        self.lm_head = nn.Linear(EMBED, VOCAB, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT
        self.register_buffer("pos", torch.arange(BLOCK))

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(self.pos[: idx.size(1)])
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.reshape(-1))


def get_batch(step):
    rows = (torch.arange(BATCH) + step * BATCH) % CORPUS.size(0)
    seq = CORPUS[rows]
    return [seq[:, :BLOCK].contiguous(), seq[:, 1:].contiguous()]


def get_inputs():
    return get_batch(0)


def get_init_inputs():
    return []
