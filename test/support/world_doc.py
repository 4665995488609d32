"""A small test world (shared by the unit tests of SimWorld and the skill tests over DDS)."""
from __future__ import annotations


def obj(oid, center, size, props=(), state=None, **kw):
    return dict({"id": oid, "type": oid.split("_")[0], "shape": "box", "center": list(center), "size": list(size),
                 "properties": list(props), "state": state or {}}, **kw)


# Robot at the origin facing +x; a counter 0.6 m ahead (top 0.90, x 0.6..1.2, y -0.8..0.8).
DOC = {
    "format": "raider-scene/1", "name": "world_test",
    "robot": {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": None},
    "objects": [
        obj("Counter_1", [0.9, 0.0, 0.45], [0.6, 1.6, 0.9], ["receptacle"]),
        obj("Apple_1", [0.7, 0.3, 0.94], [0.08, 0.08, 0.08], ["pickupable", "sliceable"], {"sliced": False},
            shape="sphere"),
        obj("Knife_1", [0.7, -0.3, 0.91], [0.2, 0.03, 0.02], ["pickupable"]),
        obj("Plate_1", [0.75, 0.0, 0.91], [0.2, 0.2, 0.02], ["pickupable", "receptacle"], shape="cylinder"),
        obj("Cup_1", [0.75, 0.0, 0.97], [0.12, 0.12, 0.1], ["pickupable", "receptacle"], shape="cylinder",
            open_top=True),                                             # on the plate
        obj("Bowl_1", [0.75, -0.55, 0.935], [0.16, 0.16, 0.07], ["pickupable", "receptacle"], shape="cylinder",
            open_top=True),
        obj("Egg_1", [0.75, -0.55, 0.93], [0.045, 0.045, 0.06], ["pickupable", "breakable"], {"broken": False},
            shape="sphere"),                                            # in the bowl
        obj("Microwave_1", [0.85, 0.55, 1.05], [0.3, 0.3, 0.3], ["openable", "toggleable", "receptacle"],
            {"open": False, "switched_on": False}, door="-x"),
        obj("Mug_1", [1.15, 0.7, 0.95], [0.09, 0.09, 0.1], ["pickupable", "receptacle"], shape="cylinder",
            open_top=True),                                             # far corner: out of reach
        obj("CerealBox_1", [1.1, -0.3, 1.05], [0.07, 0.2, 0.3], ["pickupable"]),
        obj("Coaster_1", [0.65, 0.15, 0.905], [0.06, 0.06, 0.01], ["receptacle"]),
        obj("Fridge_1", [2.5, 0.0, 0.9], [0.6, 0.6, 1.8], ["openable", "receptacle"], {"open": False}, door="-x"),
        obj("Milk_1", [2.5, 0.0, 1.0], [0.08, 0.08, 0.2], ["pickupable"]),     # in the closed fridge
    ],
    "people": [{"id": "Person_1", "name": "Ana", "center": [0.0, -1.2, 0.85], "size": [0.45, 0.35, 1.7],
                "state": {"looking_at_robot": True, "hands_free": True}}],
}
