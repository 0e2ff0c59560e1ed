"""Train the panel segmenter (a small U-Net: page in, panel interiors out) and export it to ONNX.

    python training/panels/train.py DATA_DIR OUT.onnx [--steps N] [--seed S]

DATA_DIR is what prepare.py wrote. Each batch mixes synthetic pages (synth.py, drawn on the fly from DATA_DIR/art)
with the annotated training pages (DATA_DIR/real), randomly scaled, cropped and mirrored. Runs on a GPU when one is
there; the exported model takes a [1, 1, 512, 384] grey page scaled to 0..1 (letterboxed on paper white) and
returns [1, 1, 512, 384] logits.
"""

from __future__ import annotations

import argparse
import glob
import json
import time
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

import synth
from synth import render_page

HEIGHT_PX, WIDTH_PX = 512, 384
STRIP_SHARE = 0.0
"""Synthetic pages drawn as a newspaper strip: one row of panels, three to four times wider than high (off for the
shipped model: the reader gives such pages to the classical detector)."""


def letterbox(grey: np.ndarray) -> tuple[np.ndarray, float]:
    scale = min(HEIGHT_PX / grey.shape[0], WIDTH_PX / grey.shape[1])
    h, w = max(1, round(grey.shape[0] * scale)), max(1, round(grey.shape[1] * scale))
    canvas = np.full((HEIGHT_PX, WIDTH_PX), 255, np.uint8)
    canvas[:h, :w] = cv2.resize(grey, (w, h), interpolation=cv2.INTER_AREA)
    return canvas, scale


def boxes_to_label(shape: tuple[int, int], boxes: list[list[int]], erode_px: int) -> np.ndarray:
    """Inside of each box, eroded; where two boxes overlap (slanted neighbours) nobody's; an inset wins over the
    panel holding it."""
    label = np.zeros(shape, np.uint8)
    count = np.zeros(shape, np.int32)
    order = sorted(range(len(boxes)), key=lambda i: -boxes[i][2] * boxes[i][3])
    for i in order:
        x, y, w, h = boxes[i]
        m = np.zeros(shape, np.uint8)
        m[y + erode_px : y + h - erode_px, x + erode_px : x + w - erode_px] = 1
        holds = [j for j in order if j != i and _inside(boxes[j], boxes[i])]
        for j in holds:
            jx, jy, jw, jh = boxes[j]
            m[max(0, jy - erode_px) : jy + jh + erode_px, max(0, jx - erode_px) : jx + jw + erode_px] = 0
        count += m
        label |= m
    label[count > 1] = 0
    return label * 255


def _inside(inner: list[int], outer: list[int]) -> bool:
    ix, iy, iw, ih = inner
    ox, oy, ow, oh = outer
    return ix >= ox - 4 and iy >= oy - 4 and ix + iw <= ox + ow + 4 and iy + ih <= oy + oh + 4 and iw * ih < ow * oh


class Pages(IterableDataset):  # type: ignore[type-arg]
    def __init__(self, data: Path, real_share: float, seed: int, action_share: float,
                 night_share: float = 0.0, black_share: float = 0.0, strip_share: float = STRIP_SHARE,
                 tone_share: float = 0.0, real_night_share: float = 0.0, shared_frame_share: float = 0.0) -> None:
        self.action_share, self.tone_share, self.real_night_share = action_share, tone_share, real_night_share
        self.night_share, self.black_share, self.strip_share = night_share, black_share, strip_share
        self.shared_frame_share = shared_frame_share
        self.arts_glob = str(data / "art" / "*.jpg")
        self.real = json.loads((data / "real.json").read_text())
        self.real_dir = data / "real"
        self.real_share = real_share
        self.seed = seed

    def __iter__(self):  # type: ignore[no-untyped-def]
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng(self.seed * 1000 + (info.id if info else 0))
        synth.ACTION_PAGE_SHARE = self.action_share  # set in each worker, whatever the start method
        synth.NIGHT_PAGE_SHARE, synth.BLACK_GUTTER_SHARE = self.night_share, self.black_share
        synth.TONE_PAGE_SHARE = self.tone_share
        synth.SHARED_FRAME_SHARE = self.shared_frame_share
        arts = [cv2.imread(p, cv2.IMREAD_GRAYSCALE) for p in sorted(glob.glob(self.arts_glob))]
        real = [(cv2.imread(str(self.real_dir / k), cv2.IMREAD_GRAYSCALE), v) for k, v in sorted(self.real.items())]
        # Hand-annotated manga pages weigh as much as all the machine-labelled painted pages together.
        manga = [r for k, r in zip(sorted(self.real), real, strict=True) if not k.startswith("pc-")]
        painted = [r for k, r in zip(sorted(self.real), real, strict=True) if k.startswith("pc-")]
        while True:
            if real and rng.random() < self.real_share:
                pool = manga if manga and (not painted or rng.random() < 0.5) else painted
                page, boxes = pool[int(rng.integers(len(pool)))]
                label = boxes_to_label(page.shape, boxes, max(2, round(0.006 * page.shape[1])))
                if synth._chance(rng, self.tone_share):
                    page = synth.screentone(page, label, rng)
                if synth._chance(rng, self.real_night_share):
                    page = synth.night_panels(page, label, rng)
            else:
                width = int(rng.integers(480, 640))
                aspect = float(rng.choice([1.41, 1.41, 1.41, 1.3, 1.5, 1.0, 0.75]))
                if synth._chance(rng, self.strip_share):
                    width, aspect = int(rng.integers(720, 1000)), float(rng.uniform(0.25, 0.4))
                page, label, _ = render_page(rng, arts, width, int(width * aspect))
            if rng.random() < 0.5:
                page, label = page[:, ::-1], label[:, ::-1]
            if rng.random() < 0.3:  # a crop of the page: panels cut by the frame edge, other scales
                h, w = page.shape
                ch, cw = int(h * rng.uniform(0.6, 1.0)), int(w * rng.uniform(0.6, 1.0))
                y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
                page, label = page[y : y + ch, x : x + cw], label[y : y + ch, x : x + cw]
            if rng.random() < 0.3:
                quality = int(rng.integers(30, 90))
                ok, enc = cv2.imencode(".jpg", np.ascontiguousarray(page), [cv2.IMWRITE_JPEG_QUALITY, quality])
                page = cv2.imdecode(enc, cv2.IMREAD_GRAYSCALE)
            if rng.random() < 0.2:  # faded or toned paper
                page = (page.astype(np.float32) * rng.uniform(0.7, 1.0) + rng.uniform(0, 40)).clip(0, 255)
                page = page.astype(np.uint8)
            x_img, scale = letterbox(np.ascontiguousarray(page))
            y_img = np.zeros((HEIGHT_PX, WIDTH_PX), np.uint8)
            lh, lw = round(label.shape[0] * scale), round(label.shape[1] * scale)
            y_img[:lh, :lw] = cv2.resize(np.ascontiguousarray(label), (lw, lh), interpolation=cv2.INTER_NEAREST)
            yield (torch.from_numpy(x_img).float().div(255).unsqueeze(0),
                   torch.from_numpy(y_img > 127).float().unsqueeze(0))


def block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, widths: tuple[int, ...] = (16, 32, 48, 64, 96, 128)) -> None:
        super().__init__()
        self.down = nn.ModuleList()
        cin = 1
        for w in widths:
            self.down.append(block(cin, w))
            cin = w
        self.up = nn.ModuleList()
        self.fuse = nn.ModuleList()
        for w_skip, w_in in zip(reversed(widths[:-1]), reversed(widths[1:]), strict=True):
            self.up.append(nn.ConvTranspose2d(w_in, w_skip, 2, stride=2))
            self.fuse.append(block(2 * w_skip, w_skip))
        self.head = nn.Conv2d(widths[0], 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for i, down in enumerate(self.down):
            x = down(x if i == 0 else nn.functional.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for up, fuse in zip(self.up, self.fuse, strict=True):
            x = fuse(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--real-share", type=float, default=0.25)
    parser.add_argument("--workers", type=int, default=14)
    parser.add_argument("--action-share", type=float, default=synth.ACTION_PAGE_SHARE,
                        help="share of synthetic pages drawn with most gutters slanted steeply")
    parser.add_argument("--night-share", type=float, default=synth.NIGHT_PAGE_SHARE,
                        help="share of synthetic pages whose panels are inverted and darkened (night scenes)")
    parser.add_argument("--black-share", type=float, default=synth.BLACK_GUTTER_SHARE,
                        help="share of synthetic pages printed on black")
    parser.add_argument("--strip-share", type=float, default=STRIP_SHARE,
                        help="share of synthetic pages drawn as a one-row newspaper strip")
    parser.add_argument("--tone-share", type=float, default=synth.TONE_PAGE_SHARE,
                        help="share of pages, real and synthetic, given screentone over some of their panels")
    parser.add_argument("--real-night-share", type=float, default=0.0,
                        help="share of real pages with some panels made night scenes")
    parser.add_argument("--shared-frame-share", type=float, default=synth.SHARED_FRAME_SHARE,
                        help="share of synthetic pages drawn without gutters, every panel framed")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = UNet().to(device)
    pages = Pages(args.data, args.real_share, args.seed, args.action_share, args.night_share, args.black_share,
                  args.strip_share, args.tone_share, args.real_night_share, args.shared_frame_share)
    loader = DataLoader(pages, batch_size=args.batch, num_workers=args.workers, persistent_workers=True,
                        prefetch_factor=4)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=args.steps, pct_start=0.1)
    bce = nn.BCEWithLogitsLoss()
    start = time.time()
    for step, (x, y) in enumerate(loader):
        if step >= args.steps:
            break
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
            logits = model(x)
        logits = logits.float()
        prob = torch.sigmoid(logits)
        dice = 1 - (2 * (prob * y).sum() + 1) / (prob.sum() + y.sum() + 1)
        loss = bce(logits, y) + dice
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 200 == 0:
            print(f"step {step} loss {loss.item():.4f} dice {dice.item():.4f} {time.time() - start:.0f}s", flush=True)
    model.eval().cpu()
    dummy = torch.zeros(1, 1, HEIGHT_PX, WIDTH_PX)
    torch.onnx.export(model, dummy, str(args.out), input_names=["page"], output_names=["logits"], opset_version=17,
                      dynamo=False)
    print(f"exported {args.out} ({args.out.stat().st_size / 1e6:.1f} MB) after {time.time() - start:.0f}s")


if __name__ == "__main__":
    main()
