# A problem whose own eager training is not finite: a learning rate that blows the weights up.
import torch
import torch.nn as nn

TRAIN_LR = 1e30


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.exp(self.fc(x)).sum()


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
