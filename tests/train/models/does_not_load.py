# A problem file that raises when it is loaded.
import torch

raise RuntimeError("this model file is broken")
