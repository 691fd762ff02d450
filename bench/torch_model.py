"""torch_model: the reference small CNN of imgclf in PyTorch, for the peers that measure
PyTorch against it (bench/cnn_peer.py, bench/fmnist_peer.py): the same model as
workloads/imgclf/cnn.h, conv3x3(32, pad 1)-ReLU-maxpool2 - conv3x3(64, pad 1)-ReLU-maxpool2 -
FC(128)-ReLU - FC(classes), on NCHW input whose height and width are multiples of 4. The peers
run as scripts from bench/, whose folder Python puts first on the import path."""
import torch.nn as nn


def small_cnn(height, width, channels, classes):
    """The model for height x width x channels images and `classes` classes, its weights
    initialised by PyTorch's defaults from the current torch seed."""
    return nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (height // 4) * (width // 4), 128), nn.ReLU(),
        nn.Linear(128, classes))
