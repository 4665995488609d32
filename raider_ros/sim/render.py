"""Ray-cast RGB, depth and instance images of a :class:`Scene` (ROS-free).

The camera is :class:`~raider_ros.sim.camera.CameraModel`; its rays are scaled so that the
ray-caster's hit parameter *t* is the optical-frame depth z. Every drawn entity (objects, then
people, skipping the object in the gripper) becomes one triangle mesh in an open3d
``RaycastingScene``; entity k of that list has instance id k + 1. The floor (the plane z = 0,
out to :data:`FLOOR_RANGE_M` from the camera) is intersected analytically and has instance 0,
like pixels where nothing is hit (depth NaN there).

Geometry per shape (sizes are full extents):

* ``box``: 12 triangles, rotated by ``yaw_deg`` about z; ``open_top`` drops the top face; a
  ``door`` face is dropped while ``state.open`` is true.
* ``cylinder``: elliptic prism with :data:`CYLINDER_SEGMENTS` sides; ``open_top`` drops the cap.
* ``sphere``: ellipsoid; ``open_top`` keeps only the lower half (a bowl shell).

Surfaces are single sheets, so the inside of an open container or an open fridge is visible.
Shading is flat, per triangle: colour x (ambient + Lambert from a fixed sun + a little
head-light), with the normal turned towards the camera (two-sided). Colours come from
``color`` or a stable per-type default (:func:`default_color`); floor grey, sky blue.

Meshes are cached per entity geometry, the ray-casting scene per set of meshes and the rays
(with the floor and sky behind everything) per camera pose, so re-rendering an unchanged
scene is one ray cast plus a few array copies, and a robot that only moved skips the meshes.
:meth:`Renderer.occluders` measures how much each entity hides of a target (the spec's
``blocking`` by occlusion) by casting only the rays of the target's image box.
"""
from __future__ import annotations

import math
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import open3d as o3d

from raider_ros.common.geometry import entity_yaw_deg

from .camera import CameraModel
from .scene import Person, Scene, SceneObject

CYLINDER_SEGMENTS = 32
SPHERE_STACKS, SPHERE_SLICES = 12, 24
FLOOR_RANGE_M = 15.0                        # floor drawn out to this distance from the camera
FLOOR_RGB = (0.55, 0.55, 0.53)
SKY_RGB = (0.70, 0.80, 0.92)
PERSON_RGB = (0.35, 0.45, 0.65)
AMBIENT, SUN, HEADLIGHT = 0.35, 0.45, 0.25
SUN_DIR = np.array([-0.35, 0.25, 1.0]) / np.linalg.norm([-0.35, 0.25, 1.0])   # towards the light

Entity = SceneObject | Person


@dataclass
class Frame:
    """One rendered view: the images share the camera and the world version they show."""
    rgb: np.ndarray                          # (H, W, 3) uint8
    depth: np.ndarray                        # (H, W) float32, optical z [m], NaN where nothing is hit
    instance: np.ndarray                     # (H, W) int32, 0 = floor or nothing
    labels: dict[int, tuple[str, str]]       # instance id -> (entity id, type)
    camera: CameraModel
    world_version: int = 0
    ids: dict[str, int] = field(default_factory=dict)   # entity id -> instance id (inverse of labels)


def visible_pixel_counts(frame: Frame) -> dict[str, int]:
    """Entity id -> number of pixels where it is the first surface hit (0 if fully hidden)."""
    counts = np.bincount(frame.instance.ravel(), minlength=len(frame.labels) + 1)
    return {eid: int(counts[iid]) for iid, (eid, _t) in frame.labels.items()}


def default_color(type_name: str) -> tuple[float, float, float]:
    """A stable colour per type (the same in every run): hue from a CRC of the type name."""
    if type_name == "Person":
        return PERSON_RGB
    h = zlib.crc32(type_name.encode("utf-8"))
    hue = (h % 360) / 360.0
    sat = 0.45 + ((h >> 9) % 30) / 100.0
    val = 0.65 + ((h >> 17) % 25) / 100.0
    return _hsv_to_rgb(hue, sat, val)


def _hsv_to_rgb(h: float, s: float, v: float) -> tuple[float, float, float]:
    i = int(h * 6.0) % 6
    f = h * 6.0 - int(h * 6.0)
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    return [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)][i]


def drawn_entities(scene: Scene) -> list[Entity]:
    """Entities in instance-id order (id = index + 1): objects then people, minus the held object."""
    held = scene.robot.holding
    return [e for e in scene.entities if e.id != held]


# --------------------------------------------------------------------------- meshes
def _geometry_key(e: Entity) -> tuple:
    if isinstance(e, Person):
        return ("box", e.center, e.size, 0.0, frozenset())
    drop: set[str] = set()
    if e.shape == "box":
        if e.open_top:
            drop.add("+z")
        if e.door and e.is_open:
            drop.add(e.door)
        return ("box", e.center, e.size, entity_yaw_deg(e), frozenset(drop))
    return (e.shape, e.center, e.size, 0.0, frozenset({"+z"}) if e.open_top else frozenset())


_BOX_FACES = {  # face -> 4 corner indices (counter-clockwise seen from outside)
    "-x": (0, 2, 6, 4), "+x": (1, 5, 7, 3), "-y": (0, 4, 5, 1),
    "+y": (2, 3, 7, 6), "-z": (0, 1, 3, 2), "+z": (4, 6, 7, 5),
}


def box_mesh(center, size, yaw_deg: float = 0.0, drop=frozenset()) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (8, 3) and triangles (T, 3) of a box; faces named in ``drop`` are left out."""
    half = np.asarray(size, float) / 2.0
    bits = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], float)
    local = (bits * 2.0 - 1.0) * half
    verts = local @ _rot_z(yaw_deg).T + np.asarray(center, float)
    tris = []
    for face, (a, b, c, d) in _BOX_FACES.items():
        if face not in drop:
            tris += [(a, b, c), (a, c, d)]
    return verts, np.asarray(tris, dtype=np.int32).reshape(-1, 3)


def cylinder_mesh(center, size, open_top: bool = False, segments: int = CYLINDER_SEGMENTS):
    cx, cy, cz = center
    rx, ry, h = size[0] / 2.0, size[1] / 2.0, size[2] / 2.0
    ang = np.linspace(0.0, 2 * math.pi, segments, endpoint=False)
    ring = np.stack([cx + rx * np.cos(ang), cy + ry * np.sin(ang)], axis=1)
    bottom = np.column_stack([ring, np.full(segments, cz - h)])
    top = np.column_stack([ring, np.full(segments, cz + h)])
    verts = np.vstack([bottom, top, [[cx, cy, cz - h]], [[cx, cy, cz + h]]])
    i = np.arange(segments)
    j = (i + 1) % segments
    sides = np.vstack([np.stack([i, j, segments + j], 1), np.stack([i, segments + j, segments + i], 1)])
    bottom_fan = np.stack([np.full(segments, 2 * segments), j, i], 1)
    parts = [sides, bottom_fan]
    if not open_top:
        parts.append(np.stack([np.full(segments, 2 * segments + 1), segments + i, segments + j], 1))
    return verts, np.vstack(parts).astype(np.int32)


def sphere_mesh(center, size, open_top: bool = False, stacks: int = SPHERE_STACKS, slices: int = SPHERE_SLICES):
    """Ellipsoid with radii size / 2; ``open_top`` keeps the lower half only."""
    theta = np.linspace(0.0, math.pi, stacks + 1)            # 0 = top pole
    phi = np.linspace(0.0, 2 * math.pi, slices, endpoint=False)
    tt, pp = np.meshgrid(theta, phi, indexing="ij")
    unit = np.stack([np.sin(tt) * np.cos(pp), np.sin(tt) * np.sin(pp), np.cos(tt)], -1).reshape(-1, 3)
    verts = unit * (np.asarray(size, float) / 2.0) + np.asarray(center, float)
    first = stacks // 2 if open_top else 0
    tris = []
    for s in range(first, stacks):
        a = s * slices + np.arange(slices)
        b = s * slices + (np.arange(slices) + 1) % slices
        c, d = a + slices, b + slices
        if s > 0:
            tris.append(np.stack([a, c, b], 1))
        if s < stacks - 1:
            tris.append(np.stack([b, c, d], 1))
    return verts, np.vstack(tris).astype(np.int32)


def _rot_z(yaw_deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _build_mesh(key: tuple) -> tuple[np.ndarray, np.ndarray]:
    shape, center, size, yaw, drop = key
    if shape == "box":
        return box_mesh(center, size, yaw, drop)
    if shape == "cylinder":
        return cylinder_mesh(center, size, open_top="+z" in drop)
    return sphere_mesh(center, size, open_top="+z" in drop)


# --------------------------------------------------------------------------- renderer
class Renderer:
    """Renders scenes; caches meshes, the ray-casting scene and the camera rays. Thread-safe."""

    def __init__(self, max_cached_meshes: int = 2048):
        self._lock = threading.Lock()
        self._meshes: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._max = max_cached_meshes
        self._rc_key: tuple | None = None
        self._rc: _Meshes | None = None
        self._rays_key: tuple | None = None
        self._rays: _Rays | None = None

    # caches -----------------------------------------------------------------------
    def _mesh(self, key: tuple) -> tuple[np.ndarray, np.ndarray]:
        m = self._meshes.get(key)
        if m is None:
            m = self._meshes[key] = _build_mesh(key)
            while len(self._meshes) > self._max:
                self._meshes.popitem(last=False)
        else:
            self._meshes.move_to_end(key)
        return m

    def _raycaster(self, keys: tuple) -> "_Meshes":
        if keys != self._rc_key:
            self._rc, self._rc_key = _Meshes([self._mesh(k) for k in keys]), keys
        return self._rc  # type: ignore[return-value]

    def _camera_rays(self, cam: CameraModel) -> "_Rays":
        key = (cam.width, cam.height, cam.fx, cam.fy, cam.cx, cam.cy,
               tuple(cam.position.tolist()), tuple(cam.rotation.ravel().tolist()))
        if key != self._rays_key:
            self._rays, self._rays_key = _Rays(cam), key
        return self._rays  # type: ignore[return-value]

    # rendering ----------------------------------------------------------------------
    def render(self, scene: Scene, world_version: int = 0) -> Frame:
        cam = CameraModel.from_scene(scene)
        ents = drawn_entities(scene)
        keys = tuple(_geometry_key(e) for e in ents)
        n = cam.height * cam.width
        with self._lock:
            rays = self._camera_rays(cam)
            depth = rays.background_depth.copy()
            rgb = rays.background_rgb.copy()
            instance = np.zeros(n, np.int32)
            if keys:
                meshes = self._raycaster(keys)
                hit = meshes.scene.cast_rays(rays.tensor)
                t_obj = hit["t_hit"].numpy().reshape(-1)
                sel = np.flatnonzero(np.isfinite(t_obj) & (t_obj <= rays.t_floor))
                gid = hit["geometry_ids"].numpy().reshape(-1)[sel].astype(np.int64)
                tri = meshes.offsets[gid] + hit["primitive_ids"].numpy().reshape(-1)[sel]
                albedo = np.array([e.color or default_color(e.type) for e in ents], np.float32)
                depth[sel] = t_obj[sel]
                instance[sel] = (gid + 1).astype(np.int32)
                rgb[sel] = meshes.shaded(cam.position, albedo)[tri]

        labels = {k + 1: (e.id, e.type) for k, e in enumerate(ents)}
        return Frame(rgb=rgb.reshape(cam.height, cam.width, 3), depth=depth.reshape(cam.height, cam.width),
                     instance=instance.reshape(cam.height, cam.width), labels=labels, camera=cam,
                     world_version=int(world_version), ids={e.id: k + 1 for k, e in enumerate(ents)})

    def cast(self, scene: Scene, rays: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Cast arbitrary rays (N, 6: origin, direction) against the scene's drawn entities, the
        meshes the renderer draws (the floor plane is not part of it). Returns the hit
        parameter per ray (inf where nothing is hit; with unit directions, the range) and the id
        of the entity hit ("" where none). Other sensors (the base laser, sim/scan.py) use it."""
        ents = drawn_entities(scene)
        rays = np.ascontiguousarray(np.asarray(rays, np.float32).reshape(-1, 6))
        if not ents or not len(rays):
            return np.full(len(rays), np.inf, np.float32), [""] * len(rays)
        keys = tuple(_geometry_key(e) for e in ents)
        with self._lock:
            hit = self._raycaster(keys).scene.cast_rays(o3d.core.Tensor(rays))
            t = hit["t_hit"].numpy().reshape(-1).astype(np.float32)
            gid = hit["geometry_ids"].numpy().reshape(-1).astype(np.int64)
        t[~np.isfinite(t)] = np.inf
        return t, [ents[g].id if np.isfinite(tt) else "" for g, tt in zip(gid, t)]

    def occluders(self, scene: Scene, target_id: str) -> tuple[int, dict[str, tuple[int, float]]]:
        """Which drawn entities hide the target from the camera, and how much.

        Returns ``(target_pixels, {entity id: (hidden_pixels, fraction)})`` where
        ``target_pixels`` counts pixels where the target would be seen with nothing else in the
        world, ``hidden_pixels`` counts those where the entity, and only it, stands in front of
        the target, and ``fraction`` = hidden / (pixels visible without that entity) -- the
        spec's ``blocking`` measure. The floor never occludes (the camera is above it).
        """
        cam = CameraModel.from_scene(scene)
        ents = drawn_entities(scene)
        idx = next((k for k, e in enumerate(ents) if e.id == target_id), None)
        if idx is None:
            return 0, {}
        keys = tuple(_geometry_key(e) for e in ents)
        with self._lock:
            rays = self._camera_rays(cam).array
            v, t = self._mesh(keys[idx])
            cand = _pixels_under(cam, v)                     # only rays that can meet the target
            if cand.size == 0:
                return 0, {}
            solo = o3d.t.geometry.RaycastingScene()
            solo.add_triangles(o3d.core.Tensor(v.astype(np.float32)), o3d.core.Tensor(t.astype(np.uint32)))
            t_cand = solo.cast_rays(o3d.core.Tensor(np.ascontiguousarray(rays[cand])))["t_hit"].numpy()
            hit = np.isfinite(t_cand)
            sel, t_target = cand[hit], t_cand[hit]
            if sel.size == 0:
                return 0, {}
            lx = self._raycaster(keys).scene.list_intersections(o3d.core.Tensor(np.ascontiguousarray(rays[sel])))
            ray_ids = lx["ray_ids"].numpy().astype(np.int64)
            geo = lx["geometry_ids"].numpy().astype(np.int64)
            t_hit = lx["t_hit"].numpy()
        front = (t_hit < t_target[ray_ids] - 1e-4) & (geo != idx)
        ray_ids, geo = ray_ids[front], geo[front]
        # per ray: how many distinct entities stand in front of the target, and which one
        pairs = np.unique(ray_ids * (len(ents) + 1) + geo)
        r, g = pairs // (len(ents) + 1), pairs % (len(ents) + 1)
        n_front = np.bincount(r, minlength=sel.size)
        visible = int(np.count_nonzero(n_front == 0))
        only = n_front[r] == 1
        hidden = np.bincount(g[only], minlength=len(ents))
        out = {}
        for k in np.flatnonzero(hidden):
            out[ents[k].id] = (int(hidden[k]), float(hidden[k] / (visible + hidden[k])))
        return int(sel.size), out


class _Rays:
    """Everything per pixel that depends on the camera only: rays (as ``CameraModel.rays``),
    and the floor and sky behind the objects (depth and colour)."""

    def __init__(self, cam: CameraModel):
        h, w = cam.height, cam.width
        xs = ((np.arange(w) - cam.cx) / cam.fx).astype(np.float32)
        ys = ((np.arange(h) - cam.cy) / cam.fy).astype(np.float32)
        right, down, forward = (cam.rotation[:, i].astype(np.float32) for i in range(3))
        self.array = np.empty((h, w, 6), np.float32)
        self.array[..., :3] = cam.position
        # world direction of pixel (u, v) = x_u * right + y_v * down + forward (optical z = 1)
        self.array[..., 3:] = ys[:, None, None] * down + (xs[:, None] * right + forward)[None, :, :]
        self.array = self.array.reshape(-1, 6)
        self.tensor = o3d.core.Tensor.from_numpy(self.array)
        d = self.array[:, 3:]
        dz = d[:, 2]
        down = dz < 0
        t = np.full(len(dz), np.inf, np.float32)
        np.divide(np.float32(-cam.position[2]), dz, out=t, where=down)
        h2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
        floor = down & (h2 * t * t <= np.float32(FLOOR_RANGE_M ** 2))
        t[~floor] = np.inf
        self.t_floor = t
        self.background_depth = np.where(floor, t, np.float32(np.nan))
        # floor colour by head-light angle, through a 256-entry table
        facing = np.abs(dz) / np.sqrt(h2 + dz * dz)
        levels = np.clip(AMBIENT + SUN * SUN_DIR[2] + HEADLIGHT * np.linspace(0.0, 1.0, 256), 0.0, 1.0)
        table = _to_u8(np.asarray(FLOOR_RGB)[None, :] * levels[:, None])
        self.background_rgb = np.empty((len(dz), 3), np.uint8)
        self.background_rgb[:] = _to_u8(np.asarray(SKY_RGB))
        self.background_rgb[floor] = table[(facing[floor] * 255.0 + 0.5).astype(np.intp)]


class _Meshes:
    """One ray-casting scene of the drawn entities, with per-triangle normals for shading."""

    def __init__(self, meshes: list[tuple[np.ndarray, np.ndarray]]):
        self.scene = o3d.t.geometry.RaycastingScene()
        normals, centres, owner, offsets, total = [], [], [], [], 0
        for i, (v, t) in enumerate(meshes):
            gid = self.scene.add_triangles(o3d.core.Tensor(v.astype(np.float32)), o3d.core.Tensor(t.astype(np.uint32)))
            if gid != i:  # instance ids rely on geometry ids following insertion order
                raise RuntimeError(f"open3d gave geometry id {gid} to mesh {i}")
            a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
            nrm = np.cross(b - a, c - a)
            normals.append(nrm / np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12))
            centres.append((a + b + c) / 3.0)
            owner.append(np.full(len(t), i))
            offsets.append(total)
            total += len(t)
        self.offsets = np.asarray(offsets, np.int64)
        self.normals = np.vstack(normals)
        self.centres = np.vstack(centres)
        self.owner = np.concatenate(owner)
        self.entity_centres = np.array([v.mean(axis=0) for v, _t in meshes])

    def shaded(self, eye: np.ndarray, albedo: np.ndarray) -> np.ndarray:
        """(T, 3) uint8 colour of every triangle seen from ``eye``: two-sided Lambert with a sun
        and a head-light (a flat triangle shows one side to the whole image)."""
        side = np.einsum("ij,ij->i", self.normals, eye[None, :] - self.centres)
        n = self.normals * np.where(side < 0, -1.0, 1.0)[:, None]          # the side facing the camera
        # head-light from the entity's centre, so the two triangles of a face shade alike
        to_eye = eye[None, :] - self.entity_centres[self.owner]
        head = np.abs(np.einsum("ij,ij->i", n, to_eye)) / np.maximum(np.linalg.norm(to_eye, axis=1), 1e-9)
        shade = AMBIENT + SUN * np.clip(n @ SUN_DIR, 0.0, None) + HEADLIGHT * head
        return _to_u8(albedo[self.owner] * np.clip(shade, 0.0, 1.0)[:, None])


def _pixels_under(cam: CameraModel, vertices: np.ndarray) -> np.ndarray:
    """Flat indices of the pixels in the image rectangle that bounds a mesh's projection
    (every pixel when part of the mesh lies behind the camera)."""
    uvz = cam.project(vertices)
    if np.any(uvz[:, 2] <= 1e-6):
        return np.arange(cam.width * cam.height)
    u0, v0 = np.floor(uvz[:, :2].min(axis=0)).astype(int) - 1
    u1, v1 = np.ceil(uvz[:, :2].max(axis=0)).astype(int) + 1
    u0, u1 = max(u0, 0), min(u1, cam.width - 1)
    v0, v1 = max(v0, 0), min(v1, cam.height - 1)
    if u0 > u1 or v0 > v1:
        return np.arange(0)
    vv, uu = np.mgrid[v0:v1 + 1, u0:u1 + 1]
    return (vv * cam.width + uu).ravel()


def _to_u8(rgb: np.ndarray) -> np.ndarray:
    return np.clip(np.asarray(rgb) * 255.0 + 0.5, 0, 255).astype(np.uint8)


_DEFAULT = Renderer()


def render(scene: Scene, world_version: int = 0) -> Frame:
    """Render with a shared module-level :class:`Renderer` (meshes cached across calls)."""
    return _DEFAULT.render(scene, world_version)
