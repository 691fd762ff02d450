"""Pillow peer of imgclf's input pipeline (bench/input-pipeline.sh): for every JPEG of a
dataset directory (train/<class>/*.jpg), read the file, decode it with Pillow, random-crop from
the image zero-padded by PAD pixels, flip half of them, convert to float32 and normalise, and
assemble batches of 32 -- what a torchvision ImageFolder + RandomCrop(padding) +
RandomHorizontalFlip + ToTensor + Normalize DataLoader worker does, without PyTorch's own
overhead. One process, one core. Prints one JSON line: images, seconds, images_per_s.

Usage: input_peer.py DATA_DIR PAD"""
import glob
import io
import json
import os
import random
import sys
import time

import numpy as np
from PIL import Image

root, pad = sys.argv[1], int(sys.argv[2])
files = sorted(glob.glob(os.path.join(root, "train", "*", "*.jpg")))
rnd = random.Random(1)
rnd.shuffle(files)
first = Image.open(files[0])
channels = 1 if first.mode == "L" else 3
mean = np.float32(0.2860 if channels == 1 else 0.5)
std = np.float32(0.3530 if channels == 1 else 0.25)

t = time.perf_counter()
batch = []
n = 0
for path in files:
    with open(path, "rb") as f:
        data = f.read()
    img = Image.open(io.BytesIO(data))
    img = img.convert("L" if channels == 1 else "RGB")
    a = np.asarray(img)
    if channels == 1:
        a = a[:, :, None]
    h, w = a.shape[0], a.shape[1]
    if pad:
        p = np.zeros((h + 2 * pad, w + 2 * pad, channels), np.uint8)
        p[pad:pad + h, pad:pad + w] = a
        oy, ox = rnd.randint(0, 2 * pad), rnd.randint(0, 2 * pad)
        a = p[oy:oy + h, ox:ox + w]
    if rnd.random() < 0.5:
        a = a[:, ::-1]
    x = (a.astype(np.float32) / np.float32(255) - mean) / std
    batch.append(x)
    n += 1
    if len(batch) == 32:
        np.stack(batch)
        batch = []
if batch:
    np.stack(batch)
s = time.perf_counter() - t
print(json.dumps({"images": n, "seconds": s, "images_per_s": n / s}))
