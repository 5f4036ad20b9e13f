"""The camera: a pinhole with lens distortion above the table, and the optics of a cheap webcam.

Table coordinates are millimetres: ``X`` east, ``Y`` south from the table's north-west corner, ``Z``
down (so a point above the table has negative ``Z``). The camera sits south of the table's centre
and looks down at it at an angle, north up in the image. ``project`` is the exact ground truth
(OpenCV's distortion model); frames are rendered by one remap from the top-down canvas.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .config import config, uniform


@dataclass
class Camera:
    K: np.ndarray
    dist: np.ndarray
    R: np.ndarray  # world -> camera rotation
    t: np.ndarray
    size: tuple[int, int]  # (width, height)
    _maps: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def rvec(self) -> np.ndarray:
        import cv2

        return cv2.Rodrigues(self.R)[0].ravel()

    @property
    def homography(self) -> np.ndarray:
        """Table mm (Z = 0) -> undistorted image pixels."""
        H = self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.t])
        return H / H[2, 2]

    def project(self, points) -> np.ndarray:
        """Image pixels of table points ``(X, Y)`` or ``(X, Y, Z)`` in mm (distortion included)."""
        import cv2

        p = np.asarray(points, dtype=np.float64).reshape(-1, np.shape(points)[-1])
        if p.shape[1] == 2:
            p = np.column_stack([p, np.zeros(len(p))])
        out, _ = cv2.projectPoints(p, self.rvec, self.t, self.K, self.dist)
        return out.reshape(-1, 2)

    def px_per_mm(self, point) -> float:
        a, b = self.project([[point[0], point[1]], [point[0] + 1.0, point[1]]])
        return float(np.hypot(*(b - a)))

    def to_dict(self) -> dict:
        return {
            "K": self.K.tolist(),
            "dist": self.dist.tolist(),
            "rvec": self.rvec.tolist(),
            "tvec": self.t.tolist(),
            "size": list(self.size),
        }

    def canvas_maps(self, origin_mm: tuple[float, float], px_per_mm: float):
        """remap() maps from frame pixels to canvas pixels, where canvas pixel ``u`` has its centre
        at ``X = (u + 0.5) / px_per_mm + origin_x`` (likewise ``Y``). Cached."""
        import cv2

        key = (origin_mm, px_per_mm)
        if key not in self._maps:
            w, h = self.size
            step = 4  # exact on a coarse grid, bilinear in between (the map is smooth)
            gx = np.arange(0, w - 1 + step, step, dtype=np.float64)
            gy = np.arange(0, h - 1 + step, step, dtype=np.float64)
            xs, ys = np.meshgrid(gx, gy)
            pts = np.stack([xs.ravel(), ys.ravel()], axis=1).reshape(-1, 1, 2)
            criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-6)
            und = cv2.undistortPoints(pts, self.K, self.dist, None, None, self.K, criteria)
            und = und.reshape(-1, 2)
            Hinv = np.linalg.inv(self.homography)
            q = np.column_stack([und, np.ones(len(und))]) @ Hinv.T
            mm = q[:, :2] / q[:, 2:3]
            u = ((mm[:, 0] - origin_mm[0]) * px_per_mm - 0.5).reshape(len(gy), len(gx))
            v = ((mm[:, 1] - origin_mm[1]) * px_per_mm - 0.5).reshape(len(gy), len(gx))
            mx, my = _upsample(u, step, w, h), _upsample(v, step, w, h)
            self._maps.clear()
            self._maps[key] = cv2.convertMaps(mx, my, cv2.CV_16SC2)
            self._maps[(key, "float")] = (mx, my)
        return self._maps[key]

    def canvas_maps_float(self, origin_mm: tuple[float, float], px_per_mm: float):
        """The same maps as :meth:`canvas_maps` in float32 (exact, for nearest sampling)."""
        self.canvas_maps(origin_mm, px_per_mm)
        return self._maps[((origin_mm, px_per_mm), "float")]

    def visible_table_area(self) -> tuple[float, float, float, float]:
        """Bounding box (mm) of the table plane seen in the frame."""
        import cv2

        w, h = self.size
        border = [(x, y) for x in np.linspace(0, w - 1, 9) for y in (0, h - 1)]
        border += [(x, y) for y in np.linspace(0, h - 1, 9) for x in (0, w - 1)]
        pts = np.array(border, np.float64).reshape(-1, 1, 2)
        und = cv2.undistortPoints(pts, self.K, self.dist, None, self.K).reshape(-1, 2)
        q = np.column_stack([und, np.ones(len(und))]) @ np.linalg.inv(self.homography).T
        mm = q[:, :2] / q[:, 2:3]
        return (
            float(mm[:, 0].min()),
            float(mm[:, 1].min()),
            float(mm[:, 0].max()),
            float(mm[:, 1].max()),
        )


def _upsample(coarse: np.ndarray, step: int, w: int, h: int) -> np.ndarray:
    """Bilinear upsampling of values on the grid ``(step * j, step * i)`` to every pixel."""
    xs, ys = np.arange(w), np.arange(h)
    kx, tx = xs // step, (xs % step) / step
    ky, ty = ys // step, ((ys % step) / step)[:, None]
    rows = coarse[:, kx] * (1 - tx) + coarse[:, kx + 1] * tx
    return (rows[ky] * (1 - ty) + rows[ky + 1] * ty).astype(np.float32)


def _rot_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def random_camera(rng: np.random.Generator, table_mm: tuple[float, float], size) -> Camera:
    """A camera south of the table's centre, looking down at an angle, framing the whole table."""
    cfg = config()["camera"]
    w, h = size
    tw, td = table_mm
    tilt = np.deg2rad(uniform(rng, cfg["tilt_deg"]))
    yaw = np.deg2rad(uniform(rng, cfg["yaw_deg"]))
    roll = np.deg2rad(uniform(rng, cfg["roll_deg"]))
    # Camera axes in table coordinates: x east, y south-and-down, z (optical axis) down-and-north.
    axes = np.column_stack(
        [[1.0, 0, 0], [0, np.cos(tilt), np.sin(tilt)], [0, -np.sin(tilt), np.cos(tilt)]]
    )
    axes = _rot_z(yaw) @ axes @ _rot_z(roll)
    R = axes.T
    look = np.array(
        [tw / 2 + uniform(rng, cfg["offset"]) * tw, td / 2 + uniform(rng, cfg["offset"]) * td, 0.0]
    )
    distance = max(tw, td) * rng.uniform(0.9, 1.4)
    centre = look - axes[:, 2] * distance
    t = -R @ centre
    corners = np.array([[0, 0, 0], [tw, 0, 0], [tw, td, 0], [0, td, 0]], float)
    cam = (R @ corners.T).T + t
    xn, yn = cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2]
    fill = uniform(rng, cfg["fill"])
    f = fill * min((w / 2) / np.abs(xn).max(), (h / 2) / np.abs(yn).max())
    dist = np.array([uniform(rng, cfg["k1"]), uniform(rng, cfg["k2"]), 0.0, 0.0, 0.0])
    for _ in range(20):
        K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
        camera = Camera(K, dist, R, t, (w, h))
        p = camera.project(corners)
        if (
            (p[:, 0] > 2).all()
            and (p[:, 0] < w - 3).all()
            and (p[:, 1] > 2).all()
            and (p[:, 1] < h - 3).all()
        ):
            break
        f *= 0.97
    return camera


@dataclass
class Optics:
    """Light and sensor of one scene: gain and glare maps, shadow direction, noise, blur, JPEG."""

    gain: np.ndarray  # float32 (h, w, 3)
    glare: np.ndarray  # float32 (h, w, 3), added
    light_dir: tuple[float, float]  # unit vector in the table plane, where shadows fall
    shadow: float
    noise_sd: float
    blur_sigma: float
    jpeg_quality: int
    _noise: np.ndarray | None = field(default=None, repr=False, compare=False)

    def apply(self, frame: np.ndarray, rng: np.random.Generator, jpeg: bool = True) -> np.ndarray:
        import cv2

        if self.blur_sigma > 0.25:
            frame = cv2.GaussianBlur(frame, (0, 0), self.blur_sigma)
        img = frame.astype(np.float32)
        img *= self.gain
        img += self.glare
        # sensor noise: a crop of one stored noise field at a random offset (fast, seeded)
        h, w = img.shape[:2]
        if self._noise is None:
            field = np.empty((h + 64, w + 64, 3), np.float32)
            cv2.setRNGSeed(int(rng.integers(2**31)))
            cv2.randn(field, 0.0, self.noise_sd)
            self._noise = field
        dy, dx = (int(v) for v in rng.integers(0, 64, 2))
        img += self._noise[dy : dy + h, dx : dx + w]
        out = np.clip(img, 0, 255).astype(np.uint8)
        if jpeg:
            _, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality])
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return out


def random_optics(rng: np.random.Generator, size) -> Optics:
    import cv2

    cfg = config()["light"]
    w, h = size
    gain = uniform(rng, cfg["gain"])
    tint = 1.0 + rng.normal(0, cfg["tint"], 3)
    falloff = uniform(rng, cfg["falloff"])
    ys, xs = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    r2 = ((xs - cx) ** 2 + (ys - cy) ** 2) / (w**2 + h**2)
    slope = rng.normal(0, 0.5, 2)
    ramp = (xs / w - 0.5) * slope[0] + (ys / h - 0.5) * slope[1]
    small = gain * (1 - falloff * r2 * 2.5) * (1 + falloff * ramp)
    small = cv2.resize(small.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    gain_map = small[..., None] * tint.astype(np.float32)[None, None, :]
    glare = np.zeros((h, w), np.float32)
    for _ in range(int(rng.integers(cfg["glare_spots"][0], cfg["glare_spots"][1] + 1))):
        gx, gy = rng.uniform(0, w), rng.uniform(0, h)
        sx, sy = rng.uniform(0.01, 0.06) * w, rng.uniform(0.01, 0.05) * w
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        glare += (
            255
            * uniform(rng, cfg["glare_strength"])
            * np.exp(-(((xx - gx) / sx) ** 2 + ((yy - gy) / sy) ** 2) / 2)
        )
    angle = np.deg2rad(uniform(rng, cfg["light_dir_deg"]))
    return Optics(
        gain=np.ascontiguousarray(gain_map, dtype=np.float32),
        glare=np.repeat(glare[..., None], 3, axis=2),
        light_dir=(float(np.cos(angle)), float(np.sin(angle))),
        shadow=uniform(rng, cfg["shadow_strength"]),
        noise_sd=uniform(rng, cfg["noise_sd"]),
        blur_sigma=uniform(rng, cfg["blur_sigma"]),
        jpeg_quality=int(uniform(rng, cfg["jpeg_quality"])),
    )
