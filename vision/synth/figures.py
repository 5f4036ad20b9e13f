"""Figures: followers (standing and lying), the Gingerbread Man, hands and arms, a held tile.

Lying followers and all shadows lie on the table plane and are drawn on the canvas; standing
figures, hands and held tiles rise above it and are drawn in the image after the camera, from
points projected by the camera (their base point on the table is exact).
"""

from __future__ import annotations

import numpy as np

from .config import bgr, config

# A meeple's outline: x across (-0.5..0.5), y up (0 = feet, 1 = top of the head).
MEEPLE = np.array(
    [(-0.5, 0.0), (-0.12, 0.0), (0.0, 0.22), (0.12, 0.0), (0.5, 0.0), (0.22, 0.42), (0.5, 0.5),
     (0.48, 0.62), (0.15, 0.68), (0.18, 0.8), (0.13, 0.95), (0.0, 1.0), (-0.13, 0.95), (-0.18, 0.8),
     (-0.15, 0.68), (-0.48, 0.62), (-0.5, 0.5), (-0.22, 0.42)]
)  # fmt: skip


def _shade(colour, factor: float) -> tuple[int, int, int]:
    return tuple(
        int(np.clip(c * factor + (40 if factor > 1 else 0) * (factor - 1), 0, 255)) for c in colour
    )


def _fill(img, poly, colour) -> None:
    import cv2

    cv2.fillPoly(
        img, [np.round(np.asarray(poly) * 16).astype(np.int32)], colour, cv2.LINE_AA, shift=4
    )


def standing_shadow(scene, canvas, base_mm, height_mm: float) -> None:
    """A soft shadow on the table, cast away from the light, of a figure standing at ``base_mm``."""
    from .scene import _blend_poly

    d = np.asarray(scene.optics.light_dir)
    n = np.array([-d[1], d[0]])
    length = height_mm * 0.8
    w = config()["followers"]["width_mm"] * 0.45
    pts = [
        base_mm + n * w,
        base_mm + d * length + n * w * 0.6,
        base_mm + d * length * 1.1,
        base_mm + d * length - n * w * 0.6,
        base_mm - n * w,
        base_mm - d * w * 0.4,
    ]
    poly = scene.to_canvas(np.array(pts))
    _blend_poly(canvas, poly, (0, 0, 0), scene.optics.shadow, blur=2.0 * scene.scale)


def lying_follower(scene, canvas, base_mm, colour, cell, segment) -> None:
    """A farmer lying on its back at ``base_mm`` (the centre of the figure), turned at random."""
    from .scene import _blend_poly

    rng = np.random.default_rng(hash((cell, segment)) & 0xFFFFFFFF)
    angle = rng.uniform(0, 2 * np.pi)
    size = config()["followers"]["width_mm"]
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    shape = (MEEPLE - (0, 0.5)) * size * np.array([1, -1])
    mm = shape @ rot.T + base_mm
    d = np.asarray(scene.optics.light_dir)
    _blend_poly(
        canvas,
        scene.to_canvas(mm + d * 3.5),
        (0, 0, 0),
        scene.optics.shadow,
        blur=1.5 * scene.scale,
    )
    thick = config()["followers"]["thickness_mm"] * 0.35
    _fill(canvas, scene.to_canvas(mm + np.array([0.0, thick])), _shade(colour, 0.55))
    _fill(canvas, scene.to_canvas(mm), colour)
    lit = shape * 0.6 @ rot.T + base_mm - d * 1.2
    _blend_poly(canvas, scene.to_canvas(lit), (255, 255, 255), 0.18, blur=1.5 * scene.scale)


def standing_figure(
    img, camera, base_mm, colour, height_mm: float, light_dir, gingerbread=False
) -> None:
    """A standing figure seen by ``camera``: its outline rises from the projected base point."""
    import cv2

    cfg = config()["followers"]
    b, top, side = camera.project(
        [
            [base_mm[0], base_mm[1], 0.0],
            [base_mm[0], base_mm[1], -height_mm],
            [base_mm[0] + 1, base_mm[1], 0.0],
        ]
    )
    up = top - b
    across = np.array([up[1], -up[0]])
    across /= np.linalg.norm(across) + 1e-9
    if across[0] < 0:
        across = -across
    width = cfg["width_mm"] * np.linalg.norm(side - b) * (0.95 if gingerbread else 1.0)
    depth = np.linalg.norm(camera.project([[base_mm[0], base_mm[1] - 1, 0.0]])[0] - b)
    thick = cfg["thickness_mm"] * depth * 0.5
    shape = MEEPLE if not gingerbread else _gingerbread_outline()
    pts = b[None, :] + shape[:, :1] * across[None, :] * width + shape[:, 1:] * up[None, :]
    down = np.array([0.0, thick])
    _fill(img, pts + down * 0.5, _shade(colour, 0.5))  # the top and side seen from above
    _fill(img, pts, colour)
    lit = np.array(light_dir, float)
    side_sign = -1.0 if lit[0] > 0 else 1.0  # the half facing the light is brighter
    half = shape.copy()
    half[:, 0] = np.where(half[:, 0] * side_sign > 0, half[:, 0], half[:, 0] * 0.05)
    hp = b[None, :] + half[:, :1] * across[None, :] * width + half[:, 1:] * up[None, :]
    x0, y0 = np.maximum(np.floor(hp.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.ceil(hp.max(axis=0)).astype(int) + 3
    roi = img[y0:y1, x0:x1]
    if roi.size:
        overlay = roi.copy()
        _fill(overlay, hp - (x0, y0), _shade(colour, 1.35))
        cv2.addWeighted(overlay, 0.45, roi, 0.55, 0, dst=roi)
    cv2.polylines(
        img,
        [np.round(pts * 16).astype(np.int32)],
        True,
        _shade(colour, 0.4),
        1,
        cv2.LINE_AA,
        shift=4,
    )
    if gingerbread:
        for fy in (0.45, 0.6):
            c = b + up * fy
            cv2.circle(
                img,
                (int(c[0]), int(c[1])),
                max(1, int(width * 0.06)),
                (235, 240, 245),
                -1,
                cv2.LINE_AA,
            )


def _gingerbread_outline() -> np.ndarray:
    return np.array(
        [(-0.45, 0.0), (-0.12, 0.0), (0.0, 0.2), (0.12, 0.0), (0.45, 0.0), (0.2, 0.4), (0.55, 0.62),
         (0.45, 0.72), (0.14, 0.66), (0.2, 0.82), (0.14, 0.97), (0.0, 1.0), (-0.14, 0.97), (-0.2, 0.82),
         (-0.14, 0.66), (-0.45, 0.72), (-0.55, 0.62), (-0.2, 0.4)]
    )  # fmt: skip


REACH = {"south": (0.0, 1.0), "east": (1.0, 0.0), "west": (-1.0, 0.0), "north": (0.0, -1.0)}


def _scale_at(camera, xy, height_mm: float) -> float:
    """Image pixels per mm at a point ``height_mm`` above the table."""
    a, b = camera.project([[xy[0], xy[1], -height_mm], [xy[0] + 1.0, xy[1], -height_mm]])
    return float(np.hypot(*(b - a)))


def hand(
    img, camera, optics, rng, target_mm, height_mm: float, entry: str = "south", table_mm=None
) -> None:
    """An arm from a player's shoulder (beyond the ``entry`` side, above the table) reaching to a
    hand ``height_mm`` above ``target_mm``; its soft shadow falls on the table."""
    import cv2

    cfg = config()["hands"]
    skin = bgr(cfg["skins"][rng.integers(len(cfg["skins"]))])
    sleeve = bgr(cfg["sleeves"][rng.integers(len(cfg["sleeves"]))])
    h, w = img.shape[:2]
    reach = np.array(REACH.get(entry, REACH["south"]))
    side = np.array([-reach[1], reach[0]]) * rng.uniform(-150, 150)
    target = np.asarray(target_mm, float)
    shoulder_mm = target + reach * rng.uniform(520, 620) + side
    if table_mm is not None:  # the player sits beyond the table's edge on that side
        edge = {"south": (None, table_mm[1]), "north": (None, 0.0), "east": (table_mm[0], None),
                "west": (0.0, None)}[entry if entry in REACH else "south"]  # fmt: skip
        beyond = rng.uniform(150, 300)
        shoulder_mm = np.array([
            target[0] + side[0] if edge[0] is None else edge[0] + reach[0] * beyond,
            target[1] + side[1] if edge[1] is None else edge[1] + reach[1] * beyond,
        ])  # fmt: skip
    shoulder_h = height_mm + rng.uniform(200, 300)
    tip, start = camera.project(
        [[target[0], target[1], -height_mm], [shoulder_mm[0], shoulder_mm[1], -shoulder_h]]
    )
    s_tip = _scale_at(camera, target, height_mm)
    s_start = _scale_at(camera, shoulder_mm, shoulder_h)
    axis = tip - start
    axis /= np.linalg.norm(axis) + 1e-9
    normal = np.array([-axis[1], axis[0]])
    aw = cfg["arm_width_mm"]
    wrist = tip - axis * 70 * s_tip
    cuff = wrist - axis * 30 * s_tip
    palm_c = tip - axis * 35 * s_tip

    def limb(a, b, wa, wb, f=1.0):
        return np.array(
            [
                a + normal * wa * f / 2,
                b + normal * wb * f / 2,
                b - normal * wb * f / 2,
                a - normal * wa * f / 2,
            ]
        )

    start = start - axis * 2.0 * (w + h)  # the arm goes on to the body, out of the frame
    arm = limb(start, wrist, aw * 1.3 * s_start, aw * 0.8 * s_tip)
    # shadow of arm and hand, cast on the table along the light
    q = 4  # soft: drawn and blurred at a quarter of the resolution
    mask = np.zeros((h // q + 1, w // q + 1), np.float32)
    shift = np.asarray(optics.light_dir) * height_mm * s_tip * 1.2
    _fill(mask, (arm + shift * 1.5) / q, 1.0)
    angle = float(np.degrees(np.arctan2(axis[1], axis[0])))
    axes = (int(45 * s_tip / q), int(32 * s_tip / q))
    cv2.ellipse(mask, tuple(int(v) for v in (palm_c + shift) / q), axes, angle, 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), (6 + height_mm * s_tip * 0.15) / q)
    _darken(img, mask, optics.shadow * 1.2)
    _fill(
        img,
        limb(wrist - axis * 40 * s_tip, palm_c, aw * 0.75 * s_tip, aw * 0.6 * s_tip),
        _shade(skin, 0.9),
    )
    lit_side = 1.0 if (normal @ np.asarray(optics.light_dir)) < 0 else -1.0
    bands = 7
    for k in range(bands):  # a round sleeve: dark rims, lit towards the light
        f = 1.0 - k / bands
        offset = normal * lit_side * (1 - f) * aw * 0.25 * s_tip
        poly = limb(start, cuff, aw * 1.3 * s_start, aw * 0.85 * s_tip, f) + offset
        _fill(img, poly, _shade(sleeve, 0.6 + 0.55 * (1 - f)))
    cv2.ellipse(
        img,
        tuple(int(v) for v in palm_c),
        (int(42 * s_tip), int(30 * s_tip)),
        angle,
        0,
        360,
        skin,
        -1,
        cv2.LINE_AA,
    )
    for k, off in enumerate((-0.6, -0.2, 0.2, 0.55)):
        f0 = palm_c + normal * off * 30 * s_tip + axis * 25 * s_tip
        f1 = f0 + axis * (28 - 4 * abs(k - 1.5)) * s_tip
        cv2.line(
            img,
            tuple(int(v) for v in f0),
            tuple(int(v) for v in f1),
            _shade(skin, 0.93),
            max(2, int(11 * s_tip)),
            cv2.LINE_AA,
        )
    thumb0 = palm_c - normal * 28 * s_tip
    cv2.line(
        img,
        tuple(int(v) for v in thumb0),
        tuple(int(v) for v in thumb0 + (axis - normal) * 18 * s_tip),
        skin,
        max(2, int(12 * s_tip)),
        cv2.LINE_AA,
    )
    cv2.ellipse(
        img,
        tuple(int(v) for v in palm_c - normal * lit_side * 8 * s_tip),
        (int(30 * s_tip), int(14 * s_tip)),
        angle,
        0,
        360,
        _shade(skin, 1.04),
        -1,
        cv2.LINE_AA,
    )


def held_tile(
    img, camera, optics, art, centre_mm, angle_deg: float, height_mm: float, tile_mm: float
) -> np.ndarray:
    """The tile ``art`` held flat ``height_mm`` above the table at ``centre_mm``; returns its image
    corners (NW NE SE SW)."""
    import cv2

    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = (np.array([(0, 0), (1, 0), (1, 1), (0, 1)], float) - 0.5) * tile_mm
    mm = local @ rot.T + np.asarray(centre_mm)
    corners = camera.project(np.column_stack([mm, np.full(4, -height_mm)]))
    shadow_mm = mm + np.asarray(optics.light_dir) * height_mm * 0.8
    shadow = camera.project(shadow_mm)
    h, w = img.shape[:2]
    q = 4
    mask = np.zeros((h // q + 1, w // q + 1), np.float32)
    _fill(mask, shadow / q, 1.0)
    mask = cv2.GaussianBlur(mask, (0, 0), (3 + height_mm * 0.05) / q)
    _darken(img, mask, optics.shadow)
    px = art.shape[0]
    src = np.array(
        [[-0.5, -0.5], [px - 0.5, -0.5], [px - 0.5, px - 0.5], [-0.5, px - 0.5]], np.float32
    )
    thick = camera.project(np.column_stack([mm, np.full(4, -height_mm + 2.0)]))
    _fill(img, thick, (150, 168, 180))  # the cardboard edge below the printed face
    x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int) + 2, (w, h))
    if x1 > x0 and y1 > y0:
        local = (corners - (x0, y0)).astype(np.float32)
        H = cv2.getPerspectiveTransform(src, local)
        warped = cv2.warpPerspective(art, H, (int(x1 - x0), int(y1 - y0)), flags=cv2.INTER_LINEAR)
        m = np.zeros(warped.shape[:2], np.uint8)
        _fill(m, local, 255)
        roi = img[y0:y1, x0:x1]
        roi[m > 0] = warped[m > 0]
    return corners


def _darken(img, mask_small, strength: float) -> None:
    """Darken ``img`` by a low-resolution soft mask (upsampled, applied where it matters)."""
    import cv2

    ys, xs = np.nonzero(mask_small > 0.01)
    if len(xs) == 0:
        return
    h, w = img.shape[:2]
    q = max(1, round(w / (mask_small.shape[1] - 1)))
    full = cv2.resize(
        mask_small,
        (mask_small.shape[1] * q, mask_small.shape[0] * q),
        interpolation=cv2.INTER_LINEAR,
    )
    y0, y1 = max(ys.min() * q - q, 0), min(ys.max() * q + 2 * q, h)
    x0, x1 = max(xs.min() * q - q, 0), min(xs.max() * q + 2 * q, w)
    roi = img[y0:y1, x0:x1]
    factor = 1.0 - full[y0:y1, x0:x1, None] * strength
    roi[:] = (roi * factor).clip(0, 255).astype(np.uint8)
