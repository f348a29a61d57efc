# KernelBench-style level-1 problem: a 2-D convolution, 3 -> 8 channels, 3x3 kernel, no bias, one (3, 32, 32) image.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Standard 2-D convolution (stride 1, no padding, no bias)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


batch_size = 1
in_channels = 3
out_channels = 8
kernel_size = 3
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
