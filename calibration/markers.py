"""Printable calibration sheets at true scale: four ArUco table-corner markers, or a ChArUco board.

A sheet is drawn with OpenCV as a grey image at ``dpi`` dots per inch on a paper size in mm, with
the sizes printed on it and a 100 mm check bar (print at 100 %, no "fit to page"). It is written as
PNG (with its resolution recorded, so it prints at size) or as a one-page PDF made with the standard
library (the image embedded losslessly, the page exactly the paper size).

The corner markers are ids 0-3 of ``DICT_4X4_50``: one per table corner (0 top-left, 1 top-right,
2 bottom-right, 3 bottom-left as seen from the camera). Cut each out along its dashed line (a white margin of ``margin_mm`` around the black square) and lay
it in its corner, the paper's corner on the table's corner: the table corner is then the point
``margin_mm`` beyond the marker corner farthest from the other markers, along both marker edges.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .config import settings

PAPERS_MM = {"A4": (210.0, 297.0), "A3": (297.0, 420.0), "letter": (215.9, 279.4)}
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")


@dataclass(frozen=True)
class Sheet:
    image: np.ndarray  # grey uint8, true scale at dpi
    dpi: float
    title: str

    @property
    def size_mm(self) -> tuple[float, float]:
        h, w = self.image.shape[:2]
        return (w / self.dpi * 25.4, h / self.dpi * 25.4)


def dictionary(name: str | None = None):
    name = name or settings("markers")["dictionary"]
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))


def charuco_board(squares=None, square_mm=None, marker_mm=None):
    """The ChArUco board of the configuration (lengths in mm)."""
    cfg = settings("charuco")
    sx, sy = squares or cfg["squares"]
    board = cv2.aruco.CharucoBoard(
        (int(sx), int(sy)),
        float(square_mm or cfg["square_mm"]),
        float(marker_mm or cfg["marker_mm"]),
        dictionary(cfg["dictionary"]),
    )
    return board


def _page(paper: str, dpi: float, landscape: bool) -> tuple[np.ndarray, float]:
    try:
        w_mm, h_mm = PAPERS_MM[paper]
    except KeyError:
        raise ValueError(f"unknown paper {paper!r}: use one of {', '.join(PAPERS_MM)}") from None
    if landscape:
        w_mm, h_mm = h_mm, w_mm
    px = dpi / 25.4
    page = np.full((round(h_mm * px), round(w_mm * px)), 255, np.uint8)
    return page, px


def _text(page, text: str, x_mm: float, y_mm: float, px: float, size_mm: float = 4.0) -> None:
    scale = size_mm * px / 22.0
    cv2.putText(
        page,
        text,
        (round(x_mm * px), round(y_mm * px)),
        cv2.FONT_HERSHEY_SIMPLEX,
        scale,
        0,
        max(1, round(scale * 1.6)),
        cv2.LINE_AA,
    )


def _dashed_rect(page, x0: int, y0: int, x1: int, y1: int, thick: int, dash: int) -> None:
    for a, b in (
        ((x0, y0), (x1, y0)),
        ((x1, y0), (x1, y1)),
        ((x1, y1), (x0, y1)),
        ((x0, y1), (x0, y0)),
    ):
        length = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
        for start in range(0, length, 2 * dash):
            t0, t1 = start / length, min(start + dash, length) / length
            p0 = (round(a[0] + (b[0] - a[0]) * t0), round(a[1] + (b[1] - a[1]) * t0))
            p1 = (round(a[0] + (b[0] - a[0]) * t1), round(a[1] + (b[1] - a[1]) * t1))
            cv2.line(page, p0, p1, 0, thick)


def _check_bar(page, x_mm: float, y_mm: float, px: float) -> None:
    x0, x1, y = round(x_mm * px), round((x_mm + 100) * px), round(y_mm * px)
    cv2.rectangle(page, (x0, y), (x1, y + round(2 * px)), 0, -1)
    for k in range(11):
        xx = round((x_mm + 10 * k) * px)
        cv2.line(page, (xx, y - round(2 * px)), (xx, y), 0, max(1, round(0.3 * px)))
    _text(page, "100 mm: measure this bar to check the print scale", x_mm, y_mm - 3.5, px, 3.5)


def corner_sheet(paper: str = "A4", dpi: float = 300, marker_mm: float | None = None) -> Sheet:
    """Four table-corner markers (ids 0-3) on one page, with their size printed."""
    cfg = settings("markers")
    marker_mm = float(marker_mm or cfg["marker_mm"])
    page, px = _page(paper, dpi, landscape=False)
    h_mm, w_mm = page.shape[0] / px, page.shape[1] / px
    if 2 * marker_mm + 45 > w_mm or 2 * marker_mm + 75 > h_mm:
        raise ValueError(f"{marker_mm:g} mm markers do not fit four to a {paper} page")
    side = round(marker_mm * px)
    gap_x = (w_mm - 2 * marker_mm) / 3
    top = 30.0
    gap_y = (h_mm - top - 30 - 2 * marker_mm) / 2
    _text(
        page,
        f"meeplecam table corners: {marker_mm:g} mm markers, {cfg['margin_mm']:g} mm "
        f"margin ({cfg['dictionary']})",
        gap_x,
        12,
        px,
        3.6,
    )
    _text(
        page,
        "Print at 100 % (no fit to page). Cut along the dashed lines and lay each",
        gap_x,
        19,
        px,
        3.5,
    )
    _text(
        page,
        "marker flat in its table corner, paper corner on the table corner.",
        gap_x,
        24.5,
        px,
        3.5,
    )
    for marker_id in range(4):
        c, r = ((0, 0), (1, 0), (1, 1), (0, 1))[marker_id]
        x_mm = gap_x + c * (marker_mm + gap_x)
        y_mm = top + gap_y / 2 + r * (marker_mm + gap_y)
        img = cv2.aruco.generateImageMarker(dictionary(), marker_id, side, borderBits=1)
        x0, y0 = round(x_mm * px), round(y_mm * px)
        page[y0 : y0 + side, x0 : x0 + side] = img
        m = round(cfg["margin_mm"] * px)
        _dashed_rect(
            page, x0 - m, y0 - m, x0 + side + m, y0 + side + m, round(0.25 * px) or 1, round(2 * px)
        )
        _text(
            page,
            f"id {marker_id}: {CORNER_NAMES[marker_id]} corner",
            x_mm,
            y_mm + marker_mm + cfg["margin_mm"] + 6,
            px,
            3.5,
        )
    _check_bar(page, gap_x, h_mm - 12, px)
    return Sheet(page, float(dpi), "meeplecam table-corner markers")


def charuco_sheet(paper: str = "A4", dpi: float = 300) -> Sheet:
    """The ChArUco board of the configuration, landscape, with its sizes printed."""
    cfg = settings("charuco")
    board = charuco_board()
    sx, sy = cfg["squares"]
    page, px = _page(paper, dpi, landscape=True)
    h_mm, w_mm = page.shape[0] / px, page.shape[1] / px
    bw, bh = sx * cfg["square_mm"], sy * cfg["square_mm"]
    if bw + 20 > w_mm or bh + 40 > h_mm:
        raise ValueError(f"the {sx}x{sy} ChArUco board does not fit a {paper} page")
    img = board.generateImage((round(bw * px), round(bh * px)), marginSize=0, borderBits=1)
    x0, y0 = round((w_mm - bw) / 2 * px), round(22 * px)
    page[y0 : y0 + img.shape[0], x0 : x0 + img.shape[1]] = img
    _text(
        page,
        f"meeplecam ChArUco board: {sx}x{sy} squares of {cfg['square_mm']:g} mm, markers "
        f"{cfg['marker_mm']:g} mm ({cfg['dictionary']})",
        (w_mm - bw) / 2,
        10,
        px,
        3.8,
    )
    _text(page, "Print at 100 %, tape it flat on something stiff.", (w_mm - bw) / 2, 16.5, px, 3.5)
    _check_bar(page, (w_mm - bw) / 2, h_mm - 8, px)
    return Sheet(page, float(dpi), "meeplecam ChArUco board")


def write(sheet: Sheet, path: str | Path) -> Path:
    """Write a sheet as ``.pdf`` or ``.png`` (any other suffix: PNG) at true scale."""
    path = Path(path)
    if path.suffix.lower() == ".pdf":
        path.write_bytes(pdf_bytes(sheet))
    else:
        path.write_bytes(png_bytes(sheet))
    return path


def png_bytes(sheet: Sheet) -> bytes:
    """PNG with a ``pHYs`` chunk giving the print resolution."""
    ok, buf = cv2.imencode(".png", sheet.image)
    if not ok:
        raise ValueError("OpenCV could not encode the sheet as PNG")
    data = buf.tobytes()
    ppm = round(sheet.dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_of_ihdr = 8 + 8 + 13 + 4
    return data[:end_of_ihdr] + chunk + data[end_of_ihdr:]


def pdf_bytes(sheet: Sheet) -> bytes:
    """A one-page PDF, the page exactly the sheet's size, the image embedded with Flate."""
    h, w = sheet.image.shape[:2]
    w_pt, h_pt = w / sheet.dpi * 72, h / sheet.dpi * 72
    stream = zlib.compress(np.ascontiguousarray(sheet.image).tobytes(), 9)
    content = f"q {w_pt:.3f} 0 0 {h_pt:.3f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w_pt:.3f} {h_pt:.3f}] "
            "/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>"
        ).encode(),
        (
            f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
            f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(stream)} >>\nstream\n"
        ).encode()
        + stream
        + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
        f"<< /Title ({sheet.title}) /Producer (meeplecam) >>".encode(),
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {len(objects)} 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)
